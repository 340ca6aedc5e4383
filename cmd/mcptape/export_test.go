package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// exportFixtures is where the analysis tests keep the export fixtures.
const exportFixtures = "../../testdata/analysis/export"

func TestExportCommand(t *testing.T) {
	fx := func(name string) string { return filepath.Join(exportFixtures, name) }
	golden := func(name string) string {
		b, err := os.ReadFile(fx(name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	dir := t.TempDir()
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // exact stdout, when set
		file   string // output file expected, with this content
		stderr string
	}{
		{name: "har", args: []string{fx("refserver-http.jsonl.zst"), "--format", "har"}, stdout: golden("refserver-http.har")},
		{name: "ndjson", args: []string{"--format=ndjson", fx("stdio.jsonl.zst")}, stdout: golden("stdio.ndjson")},
		{name: "to file", args: []string{fx("http.jsonl.zst"), "--format", "har", "-o", filepath.Join(dir, "out.har")},
			file: golden("http.har"), stderr: "wrote 6 HTTP exchanges"},
		{name: "har of stdio", args: []string{fx("stdio.jsonl.zst"), "--format", "har", "-o", filepath.Join(dir, "bad.har")}, code: 2, stderr: "no HTTP exchanges"},
		{name: "no format", args: []string{fx("stdio.jsonl.zst")}, code: 2, stderr: "--format is required"},
		{name: "bad format", args: []string{fx("stdio.jsonl.zst"), "--format", "csv"}, code: 2, stderr: `--format "csv": want har, ndjson, otlp or requests`},
		{name: "no tape", args: []string{"--format", "har"}, code: 2, stderr: "no tape given"},
		{name: "two tapes, one missing", args: []string{"a", "b", "--format", "har"}, code: 2, stderr: "open a: no such file"},
		{name: "missing", args: []string{fx("nope.jsonl.zst"), "--format", "har"}, code: 2, stderr: "nope.jsonl.zst"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", append([]string{"export"}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit code %d, want %d; stderr: %s", code, tt.code, stderr)
			}
			if tt.stdout != "" && stdout != tt.stdout {
				t.Errorf("stdout differs from the golden file:\n%.2000s", stdout)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr %q lacks %q", stderr, tt.stderr)
			}
			if tt.code != 0 && stdout != "" {
				t.Errorf("stdout on error: %.200s", stdout)
			}
			if tt.file != "" {
				out := tt.args[len(tt.args)-1]
				b, err := os.ReadFile(out)
				if err != nil || string(b) != tt.file {
					t.Errorf("file %s: %v, content differs", out, err)
				}
				if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
					t.Errorf("file mode: %v %v", fi.Mode(), err)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.har")); !os.IsNotExist(err) {
		t.Errorf("a failed export left its file: %v", err)
	}
	var doc map[string]any
	_, stdout, _ := runCLI(t, "", "export", fx("http.jsonl.zst"), "--format", "har")
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Errorf("HAR on stdout is not JSON: %v", err)
	}
}
