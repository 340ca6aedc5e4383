package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExportRequestsCommand(t *testing.T) {
	stdio, http := filepath.Join(exportFixtures, "stdio.jsonl.zst"), filepath.Join(exportFixtures, "http.jsonl.zst")
	data, err := os.ReadFile(stdio)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tests := []struct {
		name   string
		stdin  string
		args   []string
		code   int
		lines  int    // stdout lines, or file lines when the last arg is -o's
		prefix string // of the output's first line
		stderr string
	}{
		{name: "ndjson of two tapes", args: []string{stdio, http, "--format", "requests"}, lines: 9, prefix: `{"schema_version":4,`},
		{name: "stdin", stdin: string(data), args: []string{"-", "--format", "requests"}, lines: 5, prefix: `{"schema_version":4,"tape":"-",`},
		{name: "csv", args: []string{stdio, "--format", "requests", "-o", filepath.Join(dir, "r.csv")}, lines: 6, prefix: "schema_version,tape,session,",
			stderr: "wrote 5 requests of 1 tape (14 messages)"},
		{name: "parquet", args: []string{stdio, "--format", "requests", "-o", filepath.Join(dir, "r.parquet")}, prefix: "PAR1", stderr: "wrote 5 requests"},
		{name: "jsonl", args: []string{stdio, "--format", "requests", "-o", filepath.Join(dir, "r.jsonl")}, lines: 5, prefix: `{"schema_version":4,`},
		{name: "no tape", args: []string{"--format", "requests"}, code: 2, stderr: "want at least one tape"},
		{name: "unknown extension", args: []string{stdio, "--format", "requests", "-o", filepath.Join(dir, "bad.xlsx")}, code: 2,
			stderr: `bad.xlsx": want a name ending in .csv, .parquet, .ndjson, .jsonl or .json`},
		{name: "stdin twice", stdin: string(data), args: []string{"-", "-", "--format", "requests", "-o", filepath.Join(dir, "bad.ndjson")}, code: 2, stderr: "stdin named twice"},
		{name: "missing", args: []string{stdio, filepath.Join(dir, "nope.jsonl.zst"), "--format", "requests", "-o", filepath.Join(dir, "bad.csv")}, code: 2, stderr: "nope.jsonl.zst"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tt.stdin, append([]string{"export"}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit code %d, want %d; stderr: %s", code, tt.code, stderr)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr %q lacks %q", stderr, tt.stderr)
			}
			if code != 0 {
				return
			}
			out := stdout
			if n := len(tt.args); tt.args[n-2] == "-o" {
				b, err := os.ReadFile(tt.args[n-1])
				if err != nil {
					t.Fatal(err)
				}
				if fi, err := os.Stat(tt.args[n-1]); err != nil || !privateMode(fi) {
					t.Errorf("file mode: %v %v", fi.Mode(), err)
				}
				out = string(b)
			}
			if !strings.HasPrefix(out, tt.prefix) {
				t.Errorf("output starts %.80q, want %q", out, tt.prefix)
			}
			if tt.lines > 0 && strings.Count(out, "\n") != tt.lines {
				t.Errorf("%d lines, want %d:\n%s", strings.Count(out, "\n"), tt.lines, out)
			}
		})
	}
	for _, name := range []string{"bad.ndjson", "bad.csv", "bad.xlsx"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !os.IsNotExist(err) {
			t.Errorf("a failed export left %s: %v", name, err)
		}
	}
}

// TestExportRequestsDirectory: a directory of tapes is exported as its
// tapes are, as the other export formats take it (it failed: "read DIR: is
// a directory").
func TestExportRequestsDirectory(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"stdio.jsonl.zst", "http.jsonl.zst"} {
		data, err := os.ReadFile(filepath.Join(exportFixtures, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	code, want, stderr := runCLI(t, "", "export", filepath.Join(dir, "http.jsonl.zst"), filepath.Join(dir, "stdio.jsonl.zst"), "--format", "requests")
	if code != 0 || want == "" {
		t.Fatalf("export of the files: exit code %d: %s", code, stderr)
	}
	code, got, stderr := runCLI(t, "", "export", dir, "--format", "requests")
	if code != 0 || got != want {
		t.Errorf("export of the directory: exit code %d, %s\n%d bytes, want the files' %d", code, stderr, len(got), len(want))
	}
}
