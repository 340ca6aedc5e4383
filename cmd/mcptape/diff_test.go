package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// diffFixtures is where the analysis tests keep the diff fixture tapes.
const diffFixtures = "../../testdata/analysis/diff"

func TestDiffCommand(t *testing.T) {
	fx := func(name string) string { return filepath.Join(diffFixtures, name) }
	notTape := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notTape, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		args     []string
		code     int
		stdout   string // substring expected on stdout
		stderr   string // substring expected on stderr
		noStdout bool
	}{
		{name: "equal", args: []string{fx("recorded.jsonl.zst"), fx("replay-equal.jsonl.zst")}, code: 0, stdout: "tapes are equal: 10 messages compared"},
		{name: "different", args: []string{fx("recorded.jsonl.zst"), fx("changed-server.jsonl.zst")}, code: 1,
			stdout: `+ result.content[0].text: "Echo: hi!"`},
		{name: "ignored", args: []string{fx("recorded.jsonl.zst"), fx("no-default-ignores.jsonl.zst"), "--ignore", "result.serverInfo"}, code: 0},
		{name: "ignore makes equal", args: []string{fx("recorded.jsonl.zst"), fx("ignore-paths.jsonl.zst"),
			"--ignore", "result.serverInfo.version", "--ignore", "result.content[*].text", "--ignore", "result.structuredContent"},
			code: 1, stdout: "1 differ, 1 only in a, 1 only in b"},
		{name: "strict", args: []string{"--no-default-ignores", fx("recorded.jsonl.zst"), fx("replay-equal.jsonl.zst")}, code: 1, stdout: `+ id: 100`},
		{name: "json", args: []string{"--format", "json", fx("recorded.jsonl.zst"), fx("changed-server.jsonl.zst")}, code: 1, stdout: `"mismatched": 3`},
		{name: "one arg", args: []string{fx("recorded.jsonl.zst")}, code: 2, stderr: "want two tapes", noStdout: true},
		{name: "stdin twice", args: []string{"-", "-"}, code: 2, stderr: "A and B are both - : stdin holds one tape", noStdout: true},
		{name: "bad path", args: []string{"--ignore", "a..b", fx("recorded.jsonl.zst"), fx("recorded.jsonl.zst")}, code: 2, stderr: `path "a..b"`, noStdout: true},
		{name: "bad format", args: []string{"--format", "xml", "a", "b"}, code: 2, stderr: "--format", noStdout: true},
		{name: "not a tape", args: []string{fx("recorded.jsonl.zst"), notTape}, code: 2, stderr: "notes.txt", noStdout: true},
		{name: "missing file", args: []string{fx("recorded.jsonl.zst"), fx("nope.jsonl.zst")}, code: 2, stderr: "nope.jsonl.zst", noStdout: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", append([]string{"diff"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout, stderr)
			}
			if !strings.Contains(stdout, tt.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdout, stdout)
			}
			if !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stderr lacks %q:\n%s", tt.stderr, stderr)
			}
			if tt.noStdout && stdout != "" {
				t.Errorf("stdout on error: %q", stdout)
			}
			if code == 2 && strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
				t.Errorf("error is not one line: %q", stderr)
			}
		})
	}
}
