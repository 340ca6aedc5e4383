package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	hand := "../../testdata/analysis/report/hand-made.jsonl.zst"
	want, err := os.ReadFile("../../testdata/analysis/report/hand-made.html")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		file   string // output file written
		stdout bool   // report on stdout
		stderr string
	}{
		{name: "to file", args: []string{hand, "-o", filepath.Join(dir, "r.html"), "--title", "hand-made"}, file: filepath.Join(dir, "r.html"), stderr: "wrote"},
		{name: "to stdout", args: []string{hand, "-o", "-", "--title", "hand-made"}, stdout: true},
		{name: "no output", args: []string{hand}, code: 2, stderr: "-o FILE is required"},
		{name: "no tape", args: []string{"-o", "x.html"}, code: 2, stderr: "no tape given"},
		{name: "not a tape", args: []string{"report_test.go", "-o", filepath.Join(dir, "bad.html")}, code: 2, stderr: "report_test.go"},
		{name: "bad flag", args: []string{hand, "-o", "-", "--max-timeline", "-1"}, code: 2, stderr: "--max-timeline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", append([]string{"report"}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit code %d, want %d; stderr: %s", code, tt.code, stderr)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr %q lacks %q", stderr, tt.stderr)
			}
			if tt.stdout && stdout != string(want) {
				t.Errorf("stdout is not the golden report (%d bytes)", len(stdout))
			}
			if tt.file != "" {
				b, err := os.ReadFile(tt.file)
				if err != nil || string(b) != string(want) {
					t.Errorf("%s: %v, not the golden report", tt.file, err)
				}
				if fi, err := os.Stat(tt.file); err != nil || !privateMode(fi) {
					t.Errorf("mode %v, %v; want 0600", fi.Mode(), err)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.html")); !os.IsNotExist(err) {
		t.Errorf("a failed report left its file: %v", err)
	}
}

// TestReportJSONThatIsNoRun: a JSON file that is not a load report (cut,
// or without "model" and "series") is refused as such, in one line, not
// as "not zstd data".
func TestReportJSONThatIsNoRun(t *testing.T) {
	dir := t.TempDir()
	tests := []struct{ name, body, want string }{
		{"cut", "{\n  \"format\": 1,\n  \"model\": \"open\",\n  \"series\": [", "unexpected EOF"},
		{"no series", `{"model":"open"}`, `no "series" member`},
		{"empty object", `{}`, `no "model" member`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name+".json")
			if err := os.WriteFile(path, []byte(tt.body), 0o600); err != nil {
				t.Fatal(err)
			}
			code, _, stderr := runCLI(t, "", "report", path, "-o", filepath.Join(dir, "out.html"))
			want := path + ": not a load report (the JSON of mcptape load --json): " + tt.want
			if code != 2 || !strings.Contains(stderr, want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("exit %d, stderr %q: want exit 2 and one line with %q", code, stderr, want)
			}
		})
	}
}
