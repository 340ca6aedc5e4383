package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestTapeOutputNamedAsTape: a tape written under a name that is not
// *.jsonl.zst (record -o t.jsonl wrote zstd into a ".jsonl" file, which
// inspect, check, prune, mock and replay of its directory then passed
// over) is a usage error found before anything starts: exit 2, one line
// naming the file and the name to give; no file is created and no server
// started. A tape under another name given directly is still read.
func TestTapeOutputNamedAsTape(t *testing.T) {
	for _, c := range []struct{ cmd, name, want string }{
		{"record", "t.jsonl", "t.jsonl.zst"},
		{"record", "t.zst", "t.jsonl.zst"},
		{"record", "T.JSON.ZST", "T.jsonl.zst"},
		{"record", "capture", "capture.jsonl.zst"},
		{"replay", "out.jsonl", "out.jsonl.zst"},
		{"mock", "mock.ndjson", "mock.jsonl.zst"},
	} {
		t.Run(c.cmd+" "+c.name, func(t *testing.T) {
			dir := t.TempDir()
			out, marker := filepath.Join(dir, c.name), filepath.Join(dir, "server-started")
			server := []string{"--", "sh", "-c", "touch " + marker}
			var args []string
			switch c.cmd {
			case "record":
				args = append([]string{"record", "-o", out}, server...)
			case "replay":
				args = append([]string{"replay", basicTape, "-o", out}, server...)
			case "mock":
				args = []string{"mock", basicTape, "-o", out}
			}
			code, _, stderr := runCLI(t, "", args...)
			want := "-o " + out + ": a tape is zstd-compressed JSON lines named *.jsonl.zst"
			if code != 2 || !strings.Contains(stderr, want) || !strings.HasSuffix(stderr, "give -o "+filepath.Join(dir, c.want)+"\n") ||
				strings.Count(stderr, "\n") != 1 {
				t.Errorf("%q: exit %d, stderr %q; want 2 and one line %q... suggesting %s", args, code, stderr, want, c.want)
			}
			for _, p := range []string{out, marker} {
				if _, err := os.Stat(p); err == nil {
					t.Errorf("%s exists after the usage error", p)
				}
			}
		})
	}
	// A tape under another name, named directly, is read as before.
	dir := t.TempDir()
	src, err := os.ReadFile(basicTape)
	if err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "t.jsonl")
	if err := os.WriteFile(other, src, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := runCLI(t, "", "inspect", other); code != 0 || !strings.Contains(stdout, "TAPE  "+other) {
		t.Errorf("inspect %s: exit %d, %s%s", other, code, stdout, stderr)
	}
}

// TestTapeNameKeptByNoRegularFile: a tape output that exists and is no
// regular file (a pipe, /dev/null) has no name to fix: it passes.
func TestTapeNameKeptByNoRegularFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no /dev/null")
	}
	if err := checkTapeName("-o", os.DevNull); err != nil {
		t.Errorf("%s: %v", os.DevNull, err)
	}
	if err := checkTapeName("-o", "-"); err != nil {
		t.Errorf("-: %v", err)
	}
	if err := checkTapeName("-o", "dir/t.jsonl.zst"); err != nil {
		t.Errorf("dir/t.jsonl.zst: %v", err)
	}
}

// TestDirectoryNamesMisnamedTapes: an mcptape tape in a directory under
// another name than *.jsonl.zst (renamed, or written by an older record
// -o t.jsonl) is named on stderr by every command given the directory,
// with the name to give it, instead of being passed over in silence; a
// directory with no other tape says so in its error. Files that are no
// tapes (a JSON report) are not named.
func TestDirectoryNamesMisnamedTapes(t *testing.T) {
	src, err := os.ReadFile(basicTape)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	misnamed := filepath.Join(dir, "b.jsonl")
	for name, data := range map[string][]byte{"a.jsonl.zst": src, "b.jsonl": src, "run.json": []byte(`{"model":"open","series":[]}`)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(misnamed, old, old); err != nil {
		t.Fatal(err)
	}
	note := "warning: " + misnamed + " is a tape not named *.jsonl.zst, passed over (rename it b.jsonl.zst)\n"
	for _, args := range [][]string{
		{"inspect", dir}, {"check", dir}, {"export", dir, "--format", "ndjson"}, {"mock", dir},
		{"prune", dir, "--older-than", "24h", "--dry-run"},
	} {
		code, _, stderr := runCLI(t, "", args...)
		if code != 0 || !strings.Contains(stderr, "mcptape "+args[0]+": "+note) || strings.Contains(stderr, "run.json") {
			t.Errorf("%q: exit %d, stderr %q; want 0 and the line %q", args, code, stderr, note)
		}
	}
	if err := os.Remove(filepath.Join(dir, "a.jsonl.zst")); err != nil {
		t.Fatal(err)
	}
	want := "mcptape inspect: " + dir + ": a directory without tapes (*.jsonl.zst): " + strings.TrimPrefix(note, "warning: ")
	if code, _, stderr := runCLI(t, "", "inspect", dir); code != 2 || stderr != want {
		t.Errorf("inspect of a directory with only a misnamed tape: exit %d, stderr %q; want 2 and %q", code, stderr, want)
	}
}
