package main

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestOutputOverExistingFile: export -o and report -o onto a file that
// exists with a wider mode leave it 0600, as record -o does.
func TestOutputOverExistingFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("permission bits are a read-only flag on Windows")
	}
	dir := t.TempDir()
	tests := []struct {
		name string
		args func(out string) []string
	}{
		{name: "export", args: func(out string) []string {
			return []string{"export", filepath.Join(exportFixtures, "stdio.jsonl.zst"), "--format", "ndjson", "-o", out}
		}},
		{name: "report", args: func(out string) []string {
			return []string{"report", "../../testdata/analysis/report/hand-made.jsonl.zst", "-o", out}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, tt.name+".out")
			if err := os.WriteFile(out, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(out, 0o644); err != nil { // past the umask
				t.Fatal(err)
			}
			if code, _, stderr := runMcptape(t, "", tt.args(out)...); code != 0 {
				t.Fatalf("exit code %d: %s", code, stderr)
			}
			fi, err := os.Stat(out)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("mode %v, want 0600", fi.Mode().Perm())
			}
			if fi.Size() <= int64(len("old")) {
				t.Errorf("file not rewritten: %d bytes", fi.Size())
			}
		})
	}
}
