package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
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
