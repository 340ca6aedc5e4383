package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/capture"
	"github.com/mcptape/mcptape/tape"
)

// recordHelperEnv switches TestRecordHelperProcess into a tiny stdio server:
// it echoes stdin to stdout (reads it and writes nothing when
// RECORD_HELPER_SINK is set), writes "helper stderr\n" to stderr, and exits
// with the code in RECORD_HELPER_EXIT.
const recordHelperEnv = "MCPTAPE_RECORD_HELPER"

func TestRecordHelperProcess(t *testing.T) {
	if os.Getenv(recordHelperEnv) == "" {
		t.Skip("helper process for the record tests")
	}
	if marker := os.Getenv("RECORD_HELPER_MARKER"); marker != "" {
		os.WriteFile(marker, []byte("started"), 0o600)
	}
	if os.Getenv("RECORD_HELPER_SINK") != "" {
		io.Copy(io.Discard, os.Stdin)
	} else {
		io.Copy(os.Stdout, os.Stdin)
	}
	os.Stderr.WriteString("helper stderr\n")
	var code int
	fmt.Sscan(os.Getenv("RECORD_HELPER_EXIT"), &code)
	os.Exit(code)
}

// helperArgv is the command line that starts the helper server.
func helperArgv() []string {
	return []string{os.Args[0], "-test.run=^TestRecordHelperProcess$"}
}

func TestRecordUsageErrors(t *testing.T) {
	tp := filepath.Join(t.TempDir(), "t.jsonl.zst")
	tests := []struct {
		name string
		args []string
		want string // in the error line
	}{
		{"no command", []string{"record", "-o", tp}, "no server command"},
		{"only a dash", []string{"record", "-o", tp, "--"}, "no server command"},
		{"tape on stdout", []string{"record", "-o", "-", "--", "x"}, "stdout"},
		{"zero flush", []string{"record", "--flush", "0s", "--", "x"}, "--flush"},
		{"bad flush", []string{"record", "--flush", "soon", "--", "x"}, "flush"},
		{"negative grace", []string{"record", "--grace", "-1s", "--", "x"}, "--grace"},
		{"env without value", []string{"record", "--env", "NOVALUE", "--", "x"}, "NAME=VALUE"},
		{"env without name", []string{"record", "--env", "=v", "--", "x"}, "NAME=VALUE"},
		{"max frame", []string{"record", "--max-frame-mib", "0", "--", "x"}, "--max-frame-mib"},
		{"level too low", []string{"record", "--level", "0", "--", "x"}, "--level 0"},
		{"level too high", []string{"record", "--upstream", "http://127.0.0.1:1/mcp", "--level", "23"}, "--level 23"},
		{"unknown flag", []string{"record", "--bogus", "--", "x"}, "bogus"},
		{"stdio flag in HTTP mode", []string{"record", "--upstream", "http://127.0.0.1:1/mcp", "--env", "A=1"}, "--env"},
		{"HTTP flag in stdio mode", []string{"record", "--listen", "127.0.0.1:0", "--", "x"}, "--upstream"},
		{"both modes", []string{"record", "--upstream", "http://127.0.0.1:1/mcp", "--", "x"}, "one or the other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", tt.args...)
			if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.want) {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 2, nothing, one line with %q", code, stdout, stderr, tt.want)
			}
		})
	}
	if _, err := os.Stat(tp); err == nil {
		t.Fatal("a usage error created the tape")
	}
}

func TestRecordHelp(t *testing.T) {
	code, stdout, _ := runCLI(t, "", "help", "record")
	for _, want := range []string{"--output", "--flush", "--env", "--cwd", "--grace", "-- CMD"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Fatalf("help (exit %d) lacks %q:\n%s", code, want, stdout)
		}
	}
}

func TestRecordInProcess(t *testing.T) {
	tests := []struct {
		name     string
		exit     string
		wantCode int
	}{
		{"success", "0", 0},
		{"server fails", "3", 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(recordHelperEnv, "1")
			tp := filepath.Join(t.TempDir(), "t.jsonl.zst")
			in := "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\nnot json\n"
			before := time.Now()
			args := slices.Concat([]string{"record", "-o", tp, "--env", "RECORD_HELPER_EXIT=" + tt.exit, "--env", "MY_TOKEN=s3cr3t", "--"}, helperArgv())
			code, stdout, stderr := runCLI(t, in, args...)
			if code != tt.wantCode || stdout != in || stderr != "helper stderr\n" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want %d, the input echoed, the server's stderr only", code, stdout, stderr, tt.wantCode)
			}
			r, err := tape.Open(tp)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			h := r.Header()
			raw, _ := json.Marshal(h)
			if h.Transport != "stdio" || h.Tool != "mcptape" || h.Time < before.UnixNano() || h.Time > time.Now().UnixNano() ||
				h.Target != capture.QuoteArgs(helperArgv()) || bytes.Contains(raw, []byte("s3cr3t")) || !slices.Contains(h.Argv, "MY_TOKEN=<redacted:4-7>") {
				t.Fatalf("header %s", raw)
			}
			var messages, stderrs int
			for {
				rec, err := r.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case rec.Type == tape.TypeMessage:
					messages++
				case rec.Event == tape.EventStderr:
					stderrs++
				}
			}
			if messages != 4 || stderrs != 1 || r.Warning() != nil {
				t.Fatalf("%d messages, %d stderr events, warning %v; want 4, 1, none", messages, stderrs, r.Warning())
			}
		})
	}
}

// TestRecordLevel records the same session at zstd levels 1 and 19: both
// tapes hold every message, and the higher level's is at least 5 %
// smaller (the flag reaches the tape writer). The sizes must depend on the
// level only: with --flush 1h each tape is one frame, cut at close (frames
// cut by time, many and small when the session runs slowly, as under
// -race, compress alike at every level), and the server answers nothing
// (an echo lands next to its request or further away as the run goes,
// which level 1 compresses very differently).
func TestRecordLevel(t *testing.T) {
	t.Setenv(recordHelperEnv, "1")
	in := levelSession(250)
	checkLevels(t, 250, func(level, tp string) {
		args := slices.Concat([]string{"record", "-o", tp, "--level", level, "--flush", "1h", "--env", "RECORD_HELPER_EXIT=0", "--env", "RECORD_HELPER_SINK=1", "--"}, helperArgv())
		if code, stdout, stderr := runCLI(t, in, args...); code != 0 || stdout != "" {
			t.Fatalf("level %s: exit %d, stderr %q", level, code, stderr)
		}
	})
}

// checkLevels has record write the same session into a tape at zstd
// levels 1 and 19, then checks that each tape holds messages messages and
// that the level-19 one is at least 5 % smaller: recorded twice at one
// level, the two tapes differ by well under 1 %.
func checkLevels(t *testing.T, messages int, record func(level, tape string)) {
	t.Helper()
	size := map[string]int64{}
	for _, level := range []string{"1", "19"} {
		tp := filepath.Join(t.TempDir(), "t.jsonl.zst")
		record(level, tp)
		_, recs := readTapeFile(t, tp)
		n := 0
		for _, rec := range recs {
			if rec.Type == tape.TypeMessage {
				n++
			}
		}
		if n != messages {
			t.Fatalf("level %s: %d messages, want %d", level, n, messages)
		}
		fi, err := os.Stat(tp)
		if err != nil {
			t.Fatal(err)
		}
		size[level] = fi.Size()
	}
	if size["19"] > size["1"]*95/100 {
		t.Fatalf("tape sizes: level 1 %d bytes, level 19 %d; want level 19 at least 5 %% smaller", size["1"], size["19"])
	}
	t.Logf("tape sizes: level 1 %d bytes, level 19 %d", size["1"], size["19"])
}

// levelSession returns n echo calls, one a line, each with a message of
// 240 words drawn from a small vocabulary: long text that higher zstd
// levels compress clearly better, so that the levels differ by far more
// than the records' timestamps, which vary from run to run, do.
func levelSession(n int) string {
	words := strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu")
	var b strings.Builder
	x := uint32(1)
	for i := range n {
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":"`, i)
		for range 240 {
			x = x*1664525 + 1013904223
			b.WriteString(words[x>>24%uint32(len(words))])
			b.WriteByte(' ')
		}
		b.WriteString("\"}}}\n")
	}
	return b.String()
}

// TestRecordTapeCannotBeCreated: -o in a directory that does not exist is
// a usage error (exit 2, checkOutputs) naming the path, found before the
// server is started.
func TestRecordTapeCannotBeCreated(t *testing.T) {
	t.Setenv(recordHelperEnv, "1")
	marker := filepath.Join(t.TempDir(), "started")
	t.Setenv("RECORD_HELPER_MARKER", marker)
	args := slices.Concat([]string{"record", "-o", "/nonexistent/dir/t.jsonl.zst", "--"}, helperArgv())
	code, stdout, stderr := runCLI(t, "", args...)
	if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "/nonexistent/dir") {
		t.Fatalf("exit %d, stdout %q, stderr %q: want 2 and one line naming the path", code, stdout, stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the server was started although the tape could not be created")
	}
}

// TestRecordRefusesExistingTape: record -o onto an existing file, in both
// modes, exits 2 with one line naming the file and leaves the file as it
// was, without starting the server; --force overwrites it.
func TestRecordRefusesExistingTape(t *testing.T) {
	t.Setenv(recordHelperEnv, "1")
	tests := []struct {
		name  string
		args  func(tp string) []string
		force bool
	}{
		{"stdio", func(tp string) []string {
			return slices.Concat([]string{"record", "-o", tp, "--env", "RECORD_HELPER_EXIT=0", "--"}, helperArgv())
		}, false},
		{"http", func(tp string) []string {
			return []string{"record", "--upstream", "http://127.0.0.1:1/mcp", "--listen", "127.0.0.1:0", "-o", tp}
		}, false},
		{"stdio forced", func(tp string) []string {
			return slices.Concat([]string{"record", "-o", tp, "--force", "--env", "RECORD_HELPER_EXIT=0", "--"}, helperArgv())
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			marker := filepath.Join(dir, "started")
			t.Setenv("RECORD_HELPER_MARKER", marker)
			tp := filepath.Join(dir, "t.jsonl.zst")
			const old = "an earlier recording"
			if err := os.WriteFile(tp, []byte(old), 0o600); err != nil {
				t.Fatal(err)
			}
			// A proxy that does not refuse runs until the context ends.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var errb bytes.Buffer
			code := run(ctx, &stdio{in: strings.NewReader(""), out: io.Discard, err: &errb}, tt.args(tp))
			stderr := errb.String()
			got, err := os.ReadFile(tp)
			if err != nil {
				t.Fatal(err)
			}
			if tt.force {
				if code != 0 || string(got) == old {
					t.Fatalf("--force: exit %d, stderr %q, file kept: %v; want 0 and a new tape", code, stderr, string(got) == old)
				}
				return
			}
			if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tp+" already exists") || !strings.Contains(stderr, "--force") {
				t.Fatalf("exit %d, stderr %q: want 2 and one line naming the file and --force", code, stderr)
			}
			if string(got) != old {
				t.Fatalf("the existing file was changed to %d bytes", len(got))
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatal("the server was started although the tape was refused")
			}
		})
	}
}

func TestRecordCannotStart(t *testing.T) {
	tp := filepath.Join(t.TempDir(), "t.jsonl.zst")
	code, stdout, stderr := runCLI(t, "", "record", "-o", tp, "--", "/nonexistent/server", "arg")
	if code != 127 || stdout != "" || stderr != "mcptape record: cannot start /nonexistent/server: no such file or directory\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

func TestDefaultTapePath(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 678901234, time.FixedZone("X", 3600))
	home := t.TempDir()
	tests := []struct {
		name    string
		env     map[string]string
		wantDir string // "" when an error is expected
	}{
		{"xdg", map[string]string{"XDG_STATE_HOME": filepath.Join(home, "xdg"), "HOME": home}, filepath.Join(home, "xdg", "mcptape", "tapes")},
		{"relative xdg ignored", map[string]string{"XDG_STATE_HOME": "rel", "HOME": home}, filepath.Join(home, ".local", "state", "mcptape", "tapes")},
		{"home", map[string]string{"HOME": home}, filepath.Join(home, ".local", "state", "mcptape", "tapes")},
		{"nothing", map[string]string{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, err := defaultTapePath(func(k string) string { return tt.env[k] }, start, 4242)
			if tt.wantDir == "" {
				if err == nil {
					t.Fatalf("got %s, want an error", path)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(tt.wantDir, "20260102T020405.678901Z-4242.jsonl.zst"); path != want {
				t.Fatalf("path %s, want %s", path, want)
			}
			if fi, err := os.Stat(tt.wantDir); err != nil || fi.Mode().Perm() != 0o700 {
				t.Fatalf("directory: %v, %v; want mode 0700", err, fi.Mode())
			}
		})
	}
}

func TestRecordHeaderFlags(t *testing.T) {
	c := recordCmd()
	fs, _ := c.flagSet()
	args := []string{"-o", "t.zst", "--env", "A=1", "--env", "API_KEY=xyz", "--grace", "2s", "--", "server", "--token", "abc"}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	f := &recordFlags{env: []string{"A=1", "API_KEY=xyz"}, grace: 2 * time.Second}
	h := recordHeader(f, fs, fs.Args(), time.Unix(0, 42))
	wantArgv := []string{"mcptape", "record", "--output=t.zst", "--env", "A=1", "--env", "API_KEY=<redacted:2-3>", "--grace=2s", "--", "server", "--token", "<redacted:2-3>"}
	if !slices.Equal(h.Argv, wantArgv) || h.Target != "server --token <redacted:2-3>" || h.Time != 42 {
		t.Fatalf("argv %q target %q time %d; want %q", h.Argv, h.Target, h.Time, wantArgv)
	}
	if !regexp.MustCompile(`"env":\["A=1","API_KEY=\\u003credacted:2-3\\u003e"\]`).Match(h.Extra) {
		t.Fatalf("extra %s", h.Extra)
	}
}

// TestRecordCwdCheckedFirst: a --cwd that does not exist or is not a
// directory is a usage error (exit 2, one line naming the flag and the
// path) found before anything is created: no tape (with -o or in the state
// directory), no server started. It once left a tape holding only the
// error of the server's start.
func TestRecordCwdCheckedFirst(t *testing.T) {
	t.Setenv(recordHelperEnv, "1")
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	marker := filepath.Join(dir, "started")
	t.Setenv("RECORD_HELPER_MARKER", marker)
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tp := filepath.Join(dir, "t.jsonl.zst")
	for _, c := range []struct{ cwd, want string }{
		{filepath.Join(dir, "nodir"), "--cwd " + filepath.Join(dir, "nodir") + ": no such directory"},
		{file, "--cwd " + file + ": not a directory"},
		{"", "--cwd is empty"},
	} {
		for _, out := range [][]string{{"-o", tp}, nil} {
			args := slices.Concat([]string{"record"}, out, []string{"--cwd", c.cwd, "--"}, helperArgv())
			code, stdout, stderr := runCLI(t, "", args...)
			if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.want) {
				t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and one line with %q", args, code, stdout, stderr, c.want)
			}
		}
	}
	for _, p := range []string{tp, filepath.Join(dir, "state"), marker} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s exists after a bad --cwd", p)
		}
	}
}
