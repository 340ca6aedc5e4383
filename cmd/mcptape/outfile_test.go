package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
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
		name, ext string
		args      func(out string) []string
	}{
		{name: "export", ext: ".ndjson", args: func(out string) []string {
			return []string{"export", filepath.Join(exportFixtures, "stdio.jsonl.zst"), "--format", "ndjson", "-o", out}
		}},
		{name: "report", ext: ".html", args: func(out string) []string {
			return []string{"report", "../../testdata/analysis/report/hand-made.jsonl.zst", "-o", out}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, tt.name+tt.ext)
			if err := os.WriteFile(out, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(out, 0o644); err != nil { // past the umask
				t.Fatal(err)
			}
			if code, _, stderr := runCLI(t, "", tt.args(out)...); code != 0 {
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

// TestOutputOverInput: -o naming the tape being read is refused (exit
// code 2) and the tape stays as it was: writing it truncated the input,
// replacing the recording by its export, or deleting it when the export
// then failed (har of a stdio tape, requests of the emptied tape).
func TestOutputOverInput(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(exportFixtures, "stdio.jsonl.zst"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string // the tape is added after them, -o TAPE last
	}{
		{name: "export ndjson", args: []string{"export", "--format", "ndjson"}},
		{name: "export har", args: []string{"export", "--format", "har"}},
		{name: "export requests", args: []string{"export", "--format", "requests"}},
		{name: "report", args: []string{"report"}},
		{name: "baseline", args: []string{"baseline"}},
		{name: "check", args: []string{"check"}},
		{name: "replay", args: []string{"replay", "--force", "--speed", "max"}},
	}
	for _, tt := range tests {
		// -o names the tape as given, or the same file under another
		// name; the one-line refusal names each name once
		for _, same := range []bool{true, false} {
			t.Run(fmt.Sprint(tt.name, " same name ", same), func(t *testing.T) {
				tp := filepath.Join(t.TempDir(), "t.jsonl.zst")
				if err := os.WriteFile(tp, src, 0o600); err != nil {
					t.Fatal(err)
				}
				out, names := tp, 1
				if !same {
					out, names = "./"+filepath.Base(tp), 2
					t.Chdir(filepath.Dir(tp))
				}
				args := append(append(slices.Clone(tt.args), tp), "-o", out)
				if tt.name == "replay" {
					args = append(append(args, "--"), exitArgv(1)...)
				}
				code, _, stderr := runCLI(t, "", args...)
				if code != 2 || !strings.Contains(stderr, "is the input") {
					t.Errorf("exit code %d, stderr %q: want 2 and the output refused", code, stderr)
				}
				if strings.Count(stderr, "\n") != 1 || strings.Count(stderr, "t.jsonl.zst") != names {
					t.Errorf("stderr %q: want one line naming the file %d times", stderr, names)
				}
				if got, err := os.ReadFile(tp); err != nil || !bytes.Equal(got, src) {
					t.Errorf("the tape changed (%d bytes, %v)", len(got), err)
				}
			})
		}
	}
}
