package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestServerStderr runs replay and load against a stdio server that logs
// on stderr: by default its lines reach mcptape's stderr, --server-stderr
// discard drops them and --server-stderr FILE writes them to a private
// file; the flag is refused without a stdio server.
func TestServerStderr(t *testing.T) {
	bin := serveBinary(t)
	server := []string{"--", bin, "serve", "--log-level", "info"}
	const logged = "server connecting" // the reference server's first log line
	runs := map[string][]string{
		"replay": {"replay", basicTape, "--speed", "max"},
		"load":   {"load", "-q", "--requests", "3", "--call", "tools/list"},
	}
	for name, base := range runs {
		for _, c := range []struct {
			where     string // --server-stderr, "" for the default
			inStderr  bool
			inFile    bool
			wantFiles bool
		}{
			{"", true, false, false},
			{"-", true, false, false},
			{"discard", false, false, false},
			{"FILE", false, true, true},
		} {
			t.Run(name+"/"+c.where, func(t *testing.T) {
				file := filepath.Join(t.TempDir(), "server.log")
				args := append([]string{}, base...)
				switch c.where {
				case "":
				case "FILE":
					args = append(args, "--server-stderr", file)
				default:
					args = append(args, "--server-stderr", c.where)
				}
				code, _, stderr := runCLI(t, "", append(args, server...)...)
				if code > 1 { // replay's answers differ from the old tape: 1
					t.Fatalf("exit %d: %s", code, stderr)
				}
				if got := strings.Contains(stderr, logged); got != c.inStderr {
					t.Errorf("server's line in mcptape's stderr: %v, want %v\n%s", got, c.inStderr, stderr)
				}
				data, err := os.ReadFile(file)
				if (err == nil) != c.wantFiles {
					t.Fatalf("file written: %v", err)
				}
				if got := strings.Contains(string(data), logged); got != c.inFile {
					t.Errorf("server's line in the file: %v, want %v\n%s", got, c.inFile, data)
				}
				if c.wantFiles && runtime.GOOS != "windows" {
					if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
						t.Errorf("file mode: %v %v, want 0600", fi.Mode(), err)
					}
				}
			})
		}
	}
	// mcptape's stderr a file, as when run from a shell: the servers
	// write to it themselves.
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out strings.Builder
	if code := run(context.Background(), &stdio{in: strings.NewReader(""), out: &out, err: f}, append(append([]string{}, runs["replay"]...), server...)); code > 1 {
		t.Errorf("replay with stderr a file: exit %d", code)
	}
	if data, err := os.ReadFile(f.Name()); err != nil || !strings.Contains(string(data), logged) {
		t.Errorf("stderr a file: %v, want the server's line in it:\n%s", err, data)
	}
	for _, args := range [][]string{
		{"replay", basicTape, "--server-stderr", "discard", "--url", "http://127.0.0.1:1/mcp"},
		{"load", "--server-stderr", "discard", "--url", "http://127.0.0.1:1/mcp", "--requests", "1", "--call", "tools/list"},
		{"replay", basicTape, "--server-stderr", "", "--", bin, "serve"},
	} {
		code, _, stderr := runCLI(t, "", args...)
		if code != 2 || !strings.Contains(stderr, "--server-stderr") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%q: exit %d, stderr %q; want 2 and one line naming --server-stderr", args, code, stderr)
		}
	}
}

// TestServerStderrKeptOnUsageError: --server-stderr FILE (and load's
// --hlog FILE) is created only once every check of the command passed,
// so a usage error found after the flag was read (exit code 2) leaves
// the user's existing file as it was: bad input loses nothing.
func TestServerStderrKeptOnUsageError(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "exists.jsonl.zst")
	if err := os.WriteFile(existing, []byte("someone's tape"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Never started: every case fails its checks first.
	server := []string{"--", filepath.Join(dir, "no-such-server")}
	for _, c := range []struct {
		name string
		args []string
		want string // in the one-line error
		flag string // of the file kept, "" for --server-stderr
	}{
		{"load --hlog before a bad --results", []string{"load", "--requests", "1", "--call", "ping", "--results", filepath.Join(dir, "r.txt")}, "--results", "--hlog"},
		{"load without --call", []string{"load", "--requests", "1"}, "--call", ""},
		{"load --results of an unknown format", []string{"load", "--requests", "1", "--call", "ping", "--results", filepath.Join(dir, "r.txt")}, "--results", ""},
		{"load --tape missing", []string{"load", "--tape", filepath.Join(dir, "none.jsonl.zst")}, "none.jsonl.zst", ""},
		{"load --find-max without --threshold", []string{"load", "--find-max", "--call", "ping"}, "--threshold", ""},
		{"replay -o its input", []string{"replay", basicTape, "--all", "-o", basicTape}, "is the input", ""},
		{"replay -o an existing file", []string{"replay", basicTape, "--all", "-o", existing}, "already exists", ""},
		{"replay of an unknown session", []string{"replay", basicTape, "--session", "nope"}, "nope", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			const kept = "yesterday's server log\n"
			file := filepath.Join(t.TempDir(), "server.log")
			if err := os.WriteFile(file, []byte(kept), 0o600); err != nil {
				t.Fatal(err)
			}
			flag := c.flag
			if flag == "" {
				flag = "--server-stderr"
			}
			args := append(append(append([]string{}, c.args...), flag, file), server...)
			code, _, stderr := runCLI(t, "", args...)
			if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("exit %d, stderr %q; want 2 and one line naming %q", code, stderr, c.want)
			}
			if data, err := os.ReadFile(file); err != nil || string(data) != kept {
				t.Errorf("%s file after the usage error: %q, %v; want it kept as it was, %q", flag, data, err, kept)
			}
		})
	}
}
