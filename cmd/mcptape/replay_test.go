package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/tapetest"
	"github.com/mcptape/mcptape/tape"
)

// replayClientLines is a client conversation with the reference server:
// the echo call is the one --echo-prefix changes.
const replayClientLines = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}
`

// recordServeTape records replayClientLines against `mcptape serve` and
// returns the tape, with its one session copied sessions times (same ids
// in every session).
func recordServeTape(t *testing.T, sessions int) string {
	t.Helper()
	dir := t.TempDir()
	one := filepath.Join(dir, "one.jsonl.zst")
	if code, _, stderr := runCLI(t, replayClientLines, "record", "-o", one, "--", serveBinary(t), "serve"); code != 0 {
		t.Fatalf("record: exit %d: %s", code, stderr)
	}
	h, recs := tapetest.Read(t, one, tape.TypeMessage)
	many := filepath.Join(dir, "many.jsonl.zst")
	w, err := tape.Create(many, h)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < sessions; i++ {
		for _, rec := range recs {
			c := *rec
			c.Session = fmt.Sprintf("s%d", i)
			if err := w.Write(&c); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return many
}

func TestReplayUsageErrors(t *testing.T) {
	tp := filepath.Join(t.TempDir(), "t.jsonl.zst")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"replay"}, "no tape given"},
		{[]string{"replay", tp}, "no live server"},
		{[]string{"replay", tp, "--url", "http://x/mcp", "--", "srv"}, "either --url or -- CMD"},
		{[]string{"replay", tp, "--all", "--session", "a", "--", "srv"}, "either --session or --all"},
		{[]string{"replay", tp, "--concurrency", "4", "--", "srv"}, "--concurrency needs --all"},
		{[]string{"replay", tp, "--speed", "fast", "--", "srv"}, `--speed "fast"`},
		{[]string{"replay", tp, "--speed", "-1", "--", "srv"}, `--speed "-1": want max or a number from 0.001 to 1e+09`},
		{[]string{"replay", tp, "--speed", "1e-300", "--", "srv"}, `--speed "1e-300": want max or a number from 0.001 to 1e+09`},
		{[]string{"replay", tp, "--speed", "2e9", "--", "srv"}, `--speed "2e9": want max`},
		{[]string{"replay", tp, "--speed", "NaN", "--", "srv"}, `--speed "NaN": want max`},
		{[]string{"load", "--tape", tp, "--speed", "1e-4", "--", "srv"}, `--speed "1e-4": want max`},
		{[]string{"mock", tp, "--speed", "1e-300"}, `--speed "1e-300": want max`},
		{[]string{"replay", tp, "--timeout", "0s", "--", "srv"}, "timeout 0s must be positive"},
		{[]string{"replay", tp, "--settle", "-1s", "--", "srv"}, `invalid argument "-1s" for "--settle" flag: a duration must not be negative`},
		{[]string{"replay", tp, "--format", "xml", "--", "srv"}, `--format "xml"`},
		{[]string{"replay", tp, "--ignore", "a..b", "--", "srv"}, "a..b"},
		{[]string{"replay", tp, "-o", "-", "--", "srv"}, "-o -"},
		{[]string{"replay", tp, "--nope", "--", "srv"}, "unknown flag"},
		{[]string{"replay", tp, "--stream-path", "/mcp/stream", "--", "srv"}, "--stream-path needs an http"},
		{[]string{"replay", tp, "--stream-path", "/s", "--url", "http://x/sse", "--sse"}, "not --sse"},
	}
	for _, tc := range tests {
		code, stdout, stderr := runCLI(t, "", tc.args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and one line with %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
}

func TestReplayBadInput(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl.zst")
	w, err := tape.Create(empty, tape.Header{Tool: "mcptape", Transport: "stdio"})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	multi := recordServeTape(t, 2)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"missing tape", append([]string{"replay", filepath.Join(dir, "nope.jsonl.zst"), "--"}, exitArgv(0)...), "no such file"},
		{"no client messages", append([]string{"replay", empty, "--"}, exitArgv(0)...), "no client-to-server messages"},
		{"unknown session", append([]string{"replay", multi, "--session", "zz", "--"}, exitArgv(0)...), `session "zz" is not in the tape`},
		{"several sessions", append([]string{"replay", multi, "--"}, exitArgv(0)...), "choose one with --session"},
		{"server does not start", []string{"replay", multi, "--session", "s0", "--", filepath.Join(dir, "no-such-server")}, `replay of session "s0" failed: connecting`},
		{"server exits", append([]string{"replay", multi, "--session", "s0", "--"}, exitArgv(0)...), `replay of session "s0" failed`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, "", tc.args...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, tc.want)
			}
		})
	}
}

func TestReplayCommand(t *testing.T) {
	bin := serveBinary(t)
	multi := recordServeTape(t, 10)
	out := filepath.Join(t.TempDir(), "replayed.jsonl.zst")

	// Ten sessions with the same ids, eight at a time, recorded to -o.
	code, stdout, stderr := runCLI(t, "", "replay", multi, "--all", "--concurrency", "8", "--speed", "max", "-o", out, "--format", "json", "--", bin, "serve")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var rep struct {
		Sessions []struct {
			Session                           string
			Matched, Differed, Missing, Extra int
		}
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("json report: %v\n%s", err, stdout)
	}
	if len(rep.Sessions) != 10 {
		t.Fatalf("%d sessions in the report", len(rep.Sessions))
	}
	for _, s := range rep.Sessions {
		if s.Matched != 3 || s.Differed+s.Missing+s.Extra != 0 {
			t.Errorf("session %s: %+v", s.Session, s)
		}
	}
	// The replay tape diffs clean against the recording.
	if code, stdout, stderr := runCLI(t, "", "diff", multi, out); code != 0 {
		t.Errorf("diff recording replay: exit %d\n%s%s", code, stdout, stderr)
	}

	// -o onto the file that now exists is refused, as record -o refuses,
	// unless --force is given.
	before, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, "", "replay", multi, "--session", "s1", "--speed", "max", "-o", out, "--", bin, "serve")
	if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, out+" already exists") || !strings.Contains(stderr, "--force") {
		t.Errorf("-o onto an existing file: exit %d, stderr %q; want 2 and one line naming it and --force", code, stderr)
	}
	if after, _ := os.ReadFile(out); !bytes.Equal(after, before) {
		t.Errorf("-o onto an existing file changed it")
	}
	if code, stdout, stderr := runCLI(t, "", "replay", multi, "--session", "s1", "--speed", "max", "-o", out, "--force", "--", bin, "serve"); code != 0 {
		t.Errorf("-o --force: exit %d\n%s%s", code, stdout, stderr)
	}

	// A changed answer: exit 1, and the diff names the call and the field.
	code, stdout, stderr = runCLI(t, "", "replay", multi, "--session", "s3", "--", bin, "serve", "--echo-prefix", "v2: ")
	if code != 1 {
		t.Fatalf("changed answer: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{`session "s3": DIFFERS`, "differs: tools/call echo, recorded id 3", `+ result.content[0].text: "v2: hi"`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "differ from the recording in 1 of 1 session") {
		t.Errorf("stderr %q", stderr)
	}
}

// TestReplayInterrupted: a replay stopped by Ctrl-C or SIGTERM (its
// context cancelled) prints the report so far and exits 130, as load and
// the offline commands do, not 2 ("failed: context canceled"), which
// blamed the server.
func TestReplayInterrupted(t *testing.T) {
	bin := serveBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	var out, errb bytes.Buffer
	// The recorded spacing times 1000 (the slowest speed): the replay is
	// still waiting when the context ends.
	code := run(ctx, &stdio{in: strings.NewReader(""), out: &out, err: &errb},
		[]string{"replay", basicTape, "--speed", "0.001", "--", bin, "serve"})
	if code != exitInterrupted || !strings.Contains(errb.String(), "interrupted") {
		t.Errorf("exit code %d, stderr %q: want %d, interrupted", code, errb.String(), exitInterrupted)
	}
	if !strings.Contains(out.String(), `session "stdio-1"`) {
		t.Errorf("no partial report on stdout:\n%s", out.String())
	}
}
