package capture

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcptape/mcptape/tape"
)

// memTape is an in-memory RecordWriter that keeps copies of what it gets.
type memTape struct {
	mu   sync.Mutex
	recs []tape.Record
	err  error // returned by every Write when set
}

func (m *memTape) Write(r *tape.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return m.err
	}
	c := *r
	c.Frame = bytes.Clone(r.Frame)
	c.Data = bytes.Clone(r.Data)
	m.recs = append(m.recs, c)
	return nil
}

func (m *memTape) records() []tape.Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.recs)
}

// syncBuffer is a bytes.Buffer safe for one writer and later readers, that
// records whether it was closed.
type syncBuffer struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	closed bool
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	return nil
}

func (b *syncBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

// frames returns the message frames of dir, with a "\n" appended to those
// that had one, so that their concatenation is the stream that crossed.
func frames(recs []tape.Record, dir tape.Direction) []byte {
	var out []byte
	for _, r := range recs {
		if r.Type == tape.TypeMessage && r.Dir == dir {
			out = append(out, r.Frame...)
			if !r.NoEOL {
				out = append(out, '\n')
			}
		}
	}
	return out
}

// stderrStream rebuilds the stderr bytes from the stderr events.
func stderrStream(t testing.TB, recs []tape.Record) []byte {
	t.Helper()
	var out []byte
	for _, r := range recs {
		if r.Type != tape.TypeEvent || r.Event != tape.EventStderr {
			continue
		}
		var d struct {
			Line  *string
			B64   string
			NoEOL bool
		}
		if err := json.Unmarshal(r.Data, &d); err != nil {
			t.Fatalf("stderr event %s: %v", r.Data, err)
		}
		if d.Line != nil {
			out = append(out, *d.Line...)
		} else {
			b, err := base64.StdEncoding.DecodeString(d.B64)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, b...)
		}
		if !d.NoEOL {
			out = append(out, '\n')
		}
	}
	return out
}

// events returns the events named name.
func events(recs []tape.Record, name string) []tape.Record {
	var out []tape.Record
	for _, r := range recs {
		if r.Type == tape.TypeEvent && r.Event == name {
			out = append(out, r)
		}
	}
	return out
}

func writeTemp(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// adversarial frames both ways: everything a broken or hostile peer might send.
const adversarial = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n" +
	"\n" + // blank line
	"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\r\n" + // CRLF
	"not json at all\n" +
	"{\"broken\": \n" +
	"\xff\xfe invalid utf-8 \xc3\x28\n" +
	"  {\"jsonrpc\":\"2.0\",\"method\":\"x\"}  \n" + // surrounding spaces
	"[{\"jsonrpc\":\"2.0\",\"method\":\"batch\"}]\n" +
	"\x00\x01\x02\n" +
	"{\"jsonrpc\":\"2.0\",\"method\":\"last\"}" // no final newline

func TestRunStdioByteExact(t *testing.T) {
	tests := []struct {
		name, c2s, s2c, stderr string
	}{
		{"empty", "", "", ""},
		{"adversarial", adversarial, adversarial, "log line\n\xffbad utf8\npartial"},
		{"only newlines", "\n\n\n", "\r\n\r\n", "\n"},
		{"large lines", strings.Repeat("a", 300<<10) + "\n" + strings.Repeat("b", 70<<10), strings.Repeat("{", 200<<10) + "\n", strings.Repeat("e", 100<<10) + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c2sOut := filepath.Join(t.TempDir(), "c2s")
			argv, env := peerCmd(t, "script",
				"PEER_S2C="+writeTemp(t, "s2c", []byte(tt.s2c)),
				"PEER_STDERR="+writeTemp(t, "stderr", []byte(tt.stderr)),
				"PEER_C2S_OUT="+c2sOut)
			mem := &memTape{}
			var stdout, stderr syncBuffer
			res, err := RunStdio(context.Background(), StdioOptions{
				Command: argv, Env: env, Stdin: strings.NewReader(tt.c2s),
				Stdout: &stdout, Stderr: &stderr, Tape: mem, Grace: 5 * time.Second,
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != 0 || len(res.Sent) != 0 {
				t.Fatalf("result %+v, want exit 0 and no signal sent", res)
			}
			got, _ := os.ReadFile(c2sOut)
			recs := mem.records()
			checkSame(t, "server received", got, []byte(tt.c2s))
			checkSame(t, "client received", stdout.Bytes(), []byte(tt.s2c))
			checkSame(t, "stderr forwarded", stderr.Bytes(), []byte(tt.stderr))
			checkSame(t, "c2s recorded", frames(recs, tape.ClientToServer), []byte(tt.c2s))
			checkSame(t, "s2c recorded", frames(recs, tape.ServerToClient), []byte(tt.s2c))
			checkSame(t, "stderr recorded", stderrStream(t, recs), []byte(tt.stderr))
			for _, r := range recs {
				if r.Session != DefaultSession || r.Time == 0 {
					t.Fatalf("record %+v lacks session or time", r)
				}
			}
			if recs[0].Event != tape.EventOpen || recs[len(recs)-1].Event != tape.EventClose {
				t.Fatalf("first/last records are %q/%q, want open/close", recs[0].Event, recs[len(recs)-1].Event)
			}
		})
	}
}

func checkSame(t testing.TB, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("%s: %d bytes, want %d; first difference at byte %d", what, len(got), len(want), i)
	}
}

func TestRunStdioFlagsInvalidFrames(t *testing.T) {
	argv, env := peerCmd(t, "echo")
	mem := &memTape{}
	in := "{\"jsonrpc\":\"2.0\",\"method\":\"ok\"}\nnot json\n\n"
	res, err := RunStdio(context.Background(), StdioOptions{Command: argv, Env: env, Stdin: strings.NewReader(in), Stdout: io.Discard, Tape: mem})
	if err != nil {
		t.Fatal(err)
	}
	// Two invalid frames each way: "not json" and the blank line.
	if res.Invalid != 4 || res.ClientMessages != 3 || res.ServerMessages != 3 {
		t.Fatalf("invalid %d, messages %d/%d; want 4, 3/3", res.Invalid, res.ClientMessages, res.ServerMessages)
	}
	flagged := events(mem.records(), tape.EventError)
	if len(flagged) != 4 || !strings.Contains(string(flagged[0].Data), "invalid-json") {
		t.Fatalf("error events %v, want 4 flagging invalid-json", flagged)
	}
}

func TestRunStdioTruncates(t *testing.T) {
	argv, env := peerCmd(t, "echo")
	mem := &memTape{}
	var out syncBuffer
	in := strings.Repeat("x", 100) + "\n" + "short\n"
	res, err := RunStdio(context.Background(), StdioOptions{Command: argv, Env: env, Stdin: strings.NewReader(in), Stdout: &out, Tape: mem, MaxFrame: 10})
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, "forwarded", out.Bytes(), []byte(in))
	want := strings.Repeat("x", 10) + "\nshort\n"
	checkSame(t, "recorded", frames(mem.records(), tape.ServerToClient), []byte(want))
	if res.Truncated != 2 {
		t.Fatalf("%d truncated, want 2 (one each way)", res.Truncated)
	}
	ev := events(mem.records(), tape.EventError)
	if len(ev) == 0 || !strings.Contains(string(ev[0].Data), `"size":100`) {
		t.Fatalf("no truncation event with the full size: %v", ev)
	}
}

func TestRunStdioLifecycle(t *testing.T) {
	const grace = time.Second // long enough for a loaded machine to let a peer exit on EOF
	tests := []struct {
		name       string
		mode       string
		env        []string
		keepStdin  bool           // do not close the client's stdin
		signal     syscall.Signal // sent on Signals after start (0: none)
		second     bool           // send signal again (Ctrl-C twice)
		cancel     bool           // cancel the context after start
		wantCode   int
		wantSignal string
		wantSent   []string
		wantReason string
		wantSigs   string // what the peer says it received
	}{
		{name: "eof exits by itself", mode: "echo", env: []string{"PEER_EXIT=3"},
			wantCode: 3, wantReason: ReasonClientEOF},
		{name: "eof then SIGTERM", mode: "deaf",
			wantCode: 143, wantSignal: "SIGTERM", wantSent: []string{"SIGTERM"}, wantReason: ReasonClientEOF},
		{name: "eof then SIGKILL", mode: "deaf", env: []string{"PEER_IGNORE=TERM"},
			wantCode: 137, wantSignal: "SIGKILL", wantSent: []string{"SIGTERM", "SIGKILL"}, wantReason: ReasonClientEOF},
		{name: "SIGINT forwarded and trapped", mode: "deaf", keepStdin: true, signal: syscall.SIGINT, env: []string{"PEER_TRAP_INT=7"},
			wantCode: 7, wantSent: []string{"SIGINT"}, wantReason: ReasonSignal},
		{name: "SIGINT forwarded and ignored", mode: "deaf", keepStdin: true, signal: syscall.SIGINT, env: []string{"PEER_IGNORE=INT"},
			wantCode: 143, wantSignal: "SIGTERM", wantSent: []string{"SIGINT", "SIGTERM"}, wantReason: ReasonSignal},
		{name: "SIGTERM ignored then SIGKILL", mode: "deaf", keepStdin: true, signal: syscall.SIGTERM, env: []string{"PEER_IGNORE=TERM"},
			wantCode: 137, wantSignal: "SIGKILL", wantSent: []string{"SIGTERM", "SIGKILL"}, wantReason: ReasonSignal},
		// A second signal kills at once; it used to wait out the grace
		// periods (SIGTERM, then SIGKILL) as if it had not come.
		{name: "second signal kills", mode: "deaf", keepStdin: true, signal: syscall.SIGINT, second: true, env: []string{"PEER_IGNORE=TERM,INT"},
			wantCode: 137, wantSignal: "SIGKILL", wantSent: []string{"SIGINT", "SIGINT", "SIGKILL"}, wantReason: ReasonSignal},
		{name: "context cancelled", mode: "deaf", keepStdin: true, cancel: true,
			wantCode: 143, wantSignal: "SIGTERM", wantSent: []string{"SIGTERM"}, wantReason: ReasonContext},
		{name: "server exits by itself", mode: "early", keepStdin: true, env: []string{"PEER_EXIT=5"},
			wantCode: 5, wantReason: ReasonServerExit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s2c := strings.Repeat("{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n", 5000) // more than a pipe holds
			argv, env := peerCmd(t, tt.mode, append(tt.env, "PEER_READY=1", "PEER_S2C="+writeTemp(t, "s2c", []byte(s2c)))...)
			inR, inW := io.Pipe()
			defer inW.Close()
			sigs := make(chan os.Signal, 1)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			mem := &memTape{}
			var stdout, stderr syncBuffer
			done := make(chan struct{})
			var res Result
			var err error
			go func() {
				defer close(done)
				res, err = RunStdio(ctx, StdioOptions{Command: argv, Env: env, Stdin: inR, Stdout: &stdout, Stderr: &stderr,
					CloseStdout: true, Tape: mem, Grace: grace, Signals: sigs})
			}()
			// Act once the peer is ready (a race-enabled peer on a busy
			// machine can take longer to start than a grace period).
			waitFor(t, func() bool { return bytes.HasPrefix(stderr.Bytes(), []byte("ready\n")) })
			start := time.Now()
			switch {
			case tt.cancel:
				cancel()
			case tt.signal != 0:
				sigs <- tt.signal
				if tt.second {
					time.Sleep(100 * time.Millisecond)
					sigs <- tt.signal
				}
			case !tt.keepStdin:
				inW.Close()
			}
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("RunStdio did not return")
			}
			if err != nil {
				t.Fatal(err)
			}
			if res.ExitCode != tt.wantCode || res.Signal != tt.wantSignal || !slices.Equal(res.Sent, tt.wantSent) || res.Reason != tt.wantReason {
				t.Fatalf("result code %d signal %q sent %v reason %q; want %d %q %v %q (stderr %q)",
					res.ExitCode, res.Signal, res.Sent, res.Reason, tt.wantCode, tt.wantSignal, tt.wantSent, tt.wantReason, stderr.Bytes())
			}
			// Each step of the shutdown waits one grace period; a second
			// signal, none.
			took := time.Since(start)
			if min := time.Duration(len(tt.wantSent)-btoi(tt.signal != 0 || tt.cancel)) * grace; !tt.second && took < min-10*time.Millisecond {
				t.Fatalf("took %v, less than the %v the grace periods require", took, min)
			}
			if tt.second && took >= grace {
				t.Fatalf("took %v after a second signal, want less than a grace period", took)
			}
			if tt.mode == "early" {
				checkSame(t, "output drained", stdout.Bytes(), []byte(s2c))
			}
			if !stdout.closed {
				t.Fatal("stdout not closed")
			}
			recs := mem.records()
			exit := events(recs, tape.EventExit)
			cl := events(recs, tape.EventClose)
			if len(exit) != 1 || len(cl) != 1 || !strings.Contains(string(cl[0].Data), tt.wantReason) {
				t.Fatalf("exit events %v, close events %v", exit, cl)
			}
			var ed exitData
			json.Unmarshal(exit[0].Data, &ed)
			if ed.Code != tt.wantCode || ed.Signal != tt.wantSignal || !slices.Equal(ed.Sent, tt.wantSent) {
				t.Fatalf("exit event %s, want code %d signal %q sent %v", exit[0].Data, tt.wantCode, tt.wantSignal, tt.wantSent)
			}
			if tt.env != nil && strings.HasPrefix(tt.env[0], "PEER_TRAP_INT") && !strings.Contains(string(stderr.Bytes()), "got SIGINT") {
				t.Fatalf("peer did not report SIGINT; stderr %q", stderr.Bytes())
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met in 10s")
}

func TestRunStdioGrandchildHoldsOutput(t *testing.T) {
	argv, env := peerCmd(t, "grandchild")
	mem := &memTape{}
	var out syncBuffer
	start := time.Now()
	var warnings []string
	var mu sync.Mutex
	inR, inW := io.Pipe() // stdin stays open: the child exits by itself
	defer inW.Close()
	res, err := RunStdio(context.Background(), StdioOptions{Command: argv, Env: env, Stdin: inR, Stdout: &out,
		Tape: mem, Grace: 200 * time.Millisecond, Warnf: func(f string, a ...any) { mu.Lock(); warnings = append(warnings, f); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reason != ReasonServerExit || len(res.Sent) > 0 {
		t.Fatalf("reason %q, sent %v: want a server exit and no signal", res.Reason, res.Sent)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("took %v: a grandchild holding stdout kept RunStdio waiting", took)
	}
	if res.ServerMessages != 1 || !bytes.Contains(out.Bytes(), []byte("bye")) {
		t.Fatalf("%d messages, output %q: the child's output was not drained", res.ServerMessages, out.Bytes())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warnings) == 0 {
		t.Fatal("no warning about the output left open")
	}
}

func TestRunStdioCannotStart(t *testing.T) {
	tests := []struct {
		name    string
		command []string
		dir     string
		want    string
	}{
		{"not found", []string{"mcptape-no-such-command"}, "", "mcptape-no-such-command"},
		{"bad path", []string{"/nonexistent/server"}, "", "/nonexistent/server"},
		{"bad dir", []string{os.Args[0]}, "/nonexistent/dir", "/nonexistent/dir"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := &memTape{}
			res, err := RunStdio(context.Background(), StdioOptions{Command: tt.command, Dir: tt.dir, Stdin: strings.NewReader(""), Stdout: io.Discard, Tape: mem})
			if !errors.Is(err, ErrStart) || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v: want one line wrapping ErrStart and naming %q", err, tt.want)
			}
			if res.ExitCode != 127 {
				t.Fatalf("exit code %d, want 127", res.ExitCode)
			}
			ev := events(mem.records(), tape.EventError)
			if len(ev) != 1 || !strings.Contains(string(ev[0].Data), "cannot start") {
				t.Fatalf("tape holds %v, want one error event", mem.records())
			}
		})
	}
}

func TestRunStdioBadOptions(t *testing.T) {
	argv, env := peerCmd(t, "early")
	ok := StdioOptions{Command: argv, Env: env, Stdin: strings.NewReader(""), Stdout: io.Discard, Tape: &memTape{}}
	tests := []struct {
		name   string
		modify func(*StdioOptions)
	}{
		{"no command", func(o *StdioOptions) { o.Command = nil }},
		{"empty program", func(o *StdioOptions) { o.Command = []string{""} }},
		{"no stdin", func(o *StdioOptions) { o.Stdin = nil }},
		{"no stdout", func(o *StdioOptions) { o.Stdout = nil }},
		{"no tape", func(o *StdioOptions) { o.Tape = nil }},
		{"negative grace", func(o *StdioOptions) { o.Grace = -time.Second }},
		{"negative max frame", func(o *StdioOptions) { o.MaxFrame = -1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := ok
			tt.modify(&o)
			if _, err := RunStdio(context.Background(), o); err == nil || errors.Is(err, ErrStart) {
				t.Fatalf("RunStdio = %v, want an option error", err)
			}
		})
	}
}

func TestRunStdioRecordingFailureKeepsForwarding(t *testing.T) {
	argv, env := peerCmd(t, "echo")
	boom := errors.New("disk full")
	mem := &memTape{err: boom}
	var out syncBuffer
	var warns []string
	var mu sync.Mutex
	in := strings.Repeat("{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n", 100)
	res, err := RunStdio(context.Background(), StdioOptions{Command: argv, Env: env, Stdin: strings.NewReader(in), Stdout: &out, Tape: mem,
		Warnf: func(f string, a ...any) { mu.Lock(); warns = append(warns, f); mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, "forwarded", out.Bytes(), []byte(in))
	if !errors.Is(res.RecordErr, boom) {
		t.Fatalf("RecordErr %v, want %v", res.RecordErr, boom)
	}
	if len(warns) != 1 {
		t.Fatalf("%d warnings, want exactly one: %q", len(warns), warns)
	}
}

// failWriter fails every write, like a client that closed its end.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, syscall.EPIPE }

func TestRunStdioClientGoneKeepsRecording(t *testing.T) {
	argv, env := peerCmd(t, "echo")
	mem := &memTape{}
	in := strings.Repeat("{\"jsonrpc\":\"2.0\",\"method\":\"n\"}\n", 100)
	var warned sync.Once
	gotWarn := false
	res, err := RunStdio(context.Background(), StdioOptions{Command: argv, Env: env, Stdin: strings.NewReader(in), Stdout: failWriter{}, Tape: mem,
		Warnf: func(string, ...any) { warned.Do(func() { gotWarn = true }) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.ServerMessages != 100 || !gotWarn {
		t.Fatalf("%d server messages recorded, warned %v; want 100, true", res.ServerMessages, gotWarn)
	}
}

func TestRunStdioManyInFlight(t *testing.T) {
	// The client writes all its requests before reading anything: nothing
	// may assume that requests and responses alternate.
	argv, env := peerCmd(t, "echo")
	mem := &memTape{}
	var in bytes.Buffer
	for i := range 5000 {
		in.WriteString(`{"jsonrpc":"2.0","id":` + strings.Repeat("9", i%7+1) + `,"method":"tools/call"}` + "\n")
	}
	var out syncBuffer
	res, err := RunStdio(context.Background(), StdioOptions{Command: argv, Env: env, Stdin: bytes.NewReader(in.Bytes()), Stdout: &out, Tape: mem})
	if err != nil {
		t.Fatal(err)
	}
	if res.ClientMessages != 5000 || res.ServerMessages != 5000 {
		t.Fatalf("recorded %d/%d messages, want 5000 each way", res.ClientMessages, res.ServerMessages)
	}
	checkSame(t, "recorded in order", frames(mem.records(), tape.ServerToClient), in.Bytes())
}

func TestRunStdioRedactsCommand(t *testing.T) {
	argv, env := peerCmd(t, "echo")
	for _, command := range [][]string{append(argv, "--api-key", "hunter2"), {"/nonexistent/server", "--token=hunter2"}} {
		mem := &memTape{}
		RunStdio(context.Background(), StdioOptions{Command: command, Env: env, Stdin: strings.NewReader(""), Stdout: io.Discard, Tape: mem})
		recs := mem.records()
		if len(recs) == 0 {
			t.Fatal("nothing recorded")
		}
		for _, r := range recs {
			if bytes.Contains(r.Data, []byte("hunter2")) {
				t.Fatalf("%s event leaks a secret: %s", r.Event, r.Data)
			}
		}
	}
}
