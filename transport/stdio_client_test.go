//go:build unix

package transport

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
)

// childEnv selects the behaviour of the test binary re-executed as a
// scripted stdio server (see TestStdioChild).
const childEnv = "MCPTAPE_TRANSPORT_TEST_CHILD"

// TestStdioChild is not a test: it is the scripted stdio server the other
// tests start by re-executing the test binary with childEnv set.
//
// Modes: "echo" answers every request line with a response holding the
// line; "stubborn-eof" also ignores stdin EOF (SIGTERM ends it);
// "stubborn-term" ignores stdin EOF and SIGTERM (SIGKILL ends it);
// "noread" never reads stdin.
//
// Methods understood in every reading mode: "big" answers with a result of
// params.size bytes; "exit" exits with status 3; "stderr" writes its
// params.text to stderr; "lines" answers with the number of lines read
// before it, blank ones included; "env" answers with $MCPTAPE_X and the working
// directory; "eol" answers whether the line ended without "\n" (the
// input ended after it). Before its first answer the server sends a notification, as
// server-everything does.
func TestStdioChild(t *testing.T) {
	mode := os.Getenv(childEnv)
	if mode == "" {
		t.Skip("helper process, run by other tests")
	}
	os.Exit(runChild(mode))
}

func runChild(mode string) int {
	if mode == "stubborn-term" {
		signal.Ignore(syscall.SIGTERM)
	}
	if mode == "noread" {
		time.Sleep(time.Minute)
		return 0
	}
	out := bufio.NewWriter(os.Stdout)
	lr, _ := NewLineReader(os.Stdin, 0)
	first := true
	lines := 0
	for {
		fr, err := lr.Next()
		if err != nil {
			break
		}
		lines++
		info := jsonrpc.Classify(fr.Data)
		if info.Kind != jsonrpc.KindRequest {
			continue
		}
		if first {
			out.WriteString(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}` + "\n")
			first = false
		}
		var p struct {
			Params struct {
				Size int    `json:"size"`
				Text string `json:"text"`
			} `json:"params"`
		}
		json.Unmarshal(fr.Data, &p)
		var result []byte
		switch info.Method {
		case "big":
			result = []byte(`{"blob":"` + strings.Repeat("x", p.Params.Size) + `"}`)
		case "exit":
			out.Flush()
			return 3
		case "stderr":
			fmt.Fprintln(os.Stderr, p.Params.Text)
			result = []byte(`{}`)
		case "lines":
			result = []byte(fmt.Sprintf(`{"lines":%d}`, lines-1))
		case "eol":
			result = []byte(fmt.Sprintf(`{"noeol":%t}`, fr.NoEOL))
		case "env":
			wd, _ := os.Getwd()
			result, _ = json.Marshal(map[string]string{"x": os.Getenv("MCPTAPE_X"), "dir": wd})
		default:
			result = append(append([]byte(`{"got":`), fr.Data...), '}')
		}
		fmt.Fprintf(out, `{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", info.ID.Raw, result)
		out.Flush()
	}
	out.Flush()
	if mode == "stubborn-eof" || mode == "stubborn-term" {
		time.Sleep(time.Minute)
	}
	return 0
}

// dialChild starts the test binary as a scripted stdio server.
func dialChild(t *testing.T, mode string, opts ...Option) *StdioConn {
	t.Helper()
	// The race detector's runtime sleeps 1 s at exit unless told not to.
	gorace := strings.TrimSpace(os.Getenv("GORACE") + " atexit_sleep_ms=0")
	opts = append([]Option{WithEnv(childEnv+"="+mode, "GORACE="+gorace)}, opts...)
	c, err := DialStdio(context.Background(), []string{os.Args[0], "-test.run=^TestStdioChild$"}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestStdioRoundTrip(t *testing.T) {
	c := dialChild(t, "echo")
	ctx := context.Background()
	frame := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"héllo"}}}`)
	written := 0
	ex, err := c.Send(ctx, frame, SendOptions{Written: func() { written++ }})
	if err != nil {
		t.Fatal(err)
	}
	if ex.ID != 1 || ex.Method != "" || ex.Status != 0 {
		t.Errorf("exchange = %+v, want ID 1 and no HTTP data", ex)
	}
	if written != 1 {
		t.Errorf("Written called %d times by the time Send returned, want once", written)
	}
	select {
	case <-ex.Done():
	default:
		t.Error("a stdio exchange is complete once sent")
	}
	// The notification sent before the first answer comes first.
	note := recvTimeout(t, c, 10*time.Second)
	if got := jsonrpc.Classify(note.Frame).Method; got != "notifications/tools/list_changed" {
		t.Errorf("first frame %s, want the list_changed notification", note.Frame)
	}
	if note.Stream != StreamStdout || note.Exchange != 0 || note.Time.IsZero() {
		t.Errorf("metadata = %+v", note)
	}
	in := recvTimeout(t, c, 10*time.Second)
	want := `{"jsonrpc":"2.0","id":1,"result":{"got":` + string(frame) + `}}`
	if string(in.Frame) != want {
		t.Errorf("answer\n got %s\nwant %s", in.Frame, want)
	}
}

func TestStdioConcurrentSends(t *testing.T) {
	c := dialChild(t, "echo")
	const senders, each = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, senders)
	for s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id := s*1000 + i
				frame := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"pad":%q}}`, id, strings.Repeat("p", i*100))
				if _, err := c.Send(context.Background(), []byte(frame), SendOptions{}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	seen := map[string]bool{}
	for len(seen) < senders*each {
		in := recvTimeout(t, c, 10*time.Second)
		info := jsonrpc.Classify(in.Frame)
		if info.Kind == jsonrpc.KindNotification {
			continue
		}
		if info.Kind != jsonrpc.KindResponse {
			t.Fatalf("bad frame (interleaved lines?): %.200s", in.Frame)
		}
		if seen[info.ID.Key()] {
			t.Fatalf("id %s answered twice", info.ID.Raw)
		}
		seen[info.ID.Key()] = true
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestStdioBigLinesBothWays(t *testing.T) {
	c := dialChild(t, "echo")
	const size = 3 << 20
	big := `{"jsonrpc":"2.0","id":"a","method":"ping","params":{"pad":"` + strings.Repeat("y", size) + `"}}`
	if _, err := c.Send(context.Background(), []byte(big), SendOptions{}); err != nil {
		t.Fatal(err)
	}
	in := recvAnswer(t, c, `"a"`)
	if !bytes.Contains(in.Frame, []byte(big)) || in.Truncated {
		t.Errorf("echo of a %d-byte line came back as %d bytes (truncated %v)", len(big), len(in.Frame), in.Truncated)
	}
	if _, err := c.Send(context.Background(), []byte(`{"jsonrpc":"2.0","id":2,"method":"big","params":{"size":5000000}}`), SendOptions{}); err != nil {
		t.Fatal(err)
	}
	in = recvAnswer(t, c, "2")
	if len(in.Frame) < 5000000 {
		t.Errorf("big answer is %d bytes", len(in.Frame))
	}
}

func TestStdioMaxFrameTruncates(t *testing.T) {
	c := dialChild(t, "echo", WithMaxFrame(1000))
	if _, err := c.Send(context.Background(), []byte(`{"jsonrpc":"2.0","id":2,"method":"big","params":{"size":5000}}`), SendOptions{}); err != nil {
		t.Fatal(err)
	}
	recvTimeout(t, c, 10*time.Second) // notification
	in := recvTimeout(t, c, 10*time.Second)
	if !in.Truncated || len(in.Frame) != 1000 {
		t.Errorf("got %d bytes, truncated %v; want 1000, true", len(in.Frame), in.Truncated)
	}
}

func TestStdioOptionsReachTheChild(t *testing.T) {
	dir := t.TempDir()
	var stderr syncBuffer
	c := dialChild(t, "echo", WithEnv("MCPTAPE_X=from-test"), WithDir(dir), WithStderr(&stderr))
	ctx := context.Background()
	c.Send(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"env"}`), SendOptions{})
	in := recvAnswer(t, c, "1")
	var got struct {
		Result struct{ X, Dir string }
	}
	if err := json.Unmarshal(in.Frame, &got); err != nil {
		t.Fatal(err)
	}
	realDir, _ := filepath.EvalSymlinks(dir)
	if got.Result.X != "from-test" || (got.Result.Dir != dir && got.Result.Dir != realDir) {
		t.Errorf("child saw %+v, want MCPTAPE_X=from-test and dir %s", got.Result, dir)
	}
	c.Send(ctx, []byte(`{"jsonrpc":"2.0","id":2,"method":"stderr","params":{"text":"to stderr"}}`), SendOptions{})
	recvAnswer(t, c, "2")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "to stderr") {
		t.Errorf("stderr = %q", stderr.String())
	}
}

func TestStdioSendRejectsBadFrames(t *testing.T) {
	c := dialChild(t, "echo")
	for _, frame := range []string{`{"a":1}` + "\n" + `{"b":2}`, "{}\n"} {
		if _, err := c.Send(context.Background(), []byte(frame), SendOptions{}); err == nil {
			t.Errorf("Send(%q) succeeded", frame)
		}
	}
}

// TestStdioSendEmptyFrame checks that an empty frame goes out as an empty
// line (a client's blank line, replayed as recorded), not refused.
func TestStdioSendEmptyFrame(t *testing.T) {
	c := dialChild(t, "echo")
	ctx := context.Background()
	for _, frame := range []string{"", "   ", "", `{"jsonrpc":"2.0","id":7,"method":"lines"}`} {
		if _, err := c.Send(ctx, []byte(frame), SendOptions{}); err != nil {
			t.Fatalf("Send(%q): %v", frame, err)
		}
	}
	recvTimeout(t, c, 10*time.Second) // the notification before the first answer
	in := recvTimeout(t, c, 10*time.Second)
	if want := `{"jsonrpc":"2.0","id":7,"result":{"lines":3}}`; string(in.Frame) != want {
		t.Errorf("answer %s, want %s (three lines before it)", in.Frame, want)
	}
}

// TestStdioSendNoEOL: a frame sent with NoEOL (a recorded last line that
// had no "\n") reaches the server without one, its input ended after it,
// and later Sends fail; without NoEOL the line has its "\n".
func TestStdioSendNoEOL(t *testing.T) {
	for _, noEOL := range []bool{false, true} {
		t.Run(fmt.Sprint("noeol=", noEOL), func(t *testing.T) {
			c := dialChild(t, "echo")
			ctx := context.Background()
			if _, err := c.Send(ctx, []byte(`{"jsonrpc":"2.0","id":7,"method":"eol"}`), SendOptions{NoEOL: noEOL}); err != nil {
				t.Fatal(err)
			}
			recvTimeout(t, c, 10*time.Second) // the notification before the first answer
			in := recvTimeout(t, c, 10*time.Second)
			if want := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"result":{"noeol":%t}}`, noEOL); string(in.Frame) != want {
				t.Errorf("answer %s, want %s", in.Frame, want)
			}
			_, err := c.Send(ctx, []byte(`{"jsonrpc":"2.0","id":8,"method":"ping"}`), SendOptions{})
			if (err != nil) != noEOL {
				t.Errorf("a later Send: %v", err)
			}
		})
	}
}

func TestStdioServerExitEndsRecv(t *testing.T) {
	c := dialChild(t, "echo")
	c.Send(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), SendOptions{})
	c.Send(context.Background(), []byte(`{"jsonrpc":"2.0","id":2,"method":"exit"}`), SendOptions{})
	recvAnswer(t, c, "1") // frames before the end are delivered first
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := c.Recv(ctx)
	if !errors.Is(err, ErrServerClosed) || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("Recv after exit = %v, want ErrServerClosed with the exit status", err)
	}
	var ee *exec.ExitError
	if !errors.As(c.ExitErr(), &ee) || ee.ExitCode() != 3 {
		t.Errorf("ExitErr = %v, want exit status 3", c.ExitErr())
	}
	// Writing to a dead server fails with ErrServerClosed (EPIPE).
	if _, err := c.Send(context.Background(), []byte(`{"jsonrpc":"2.0","id":3,"method":"ping"}`), SendOptions{}); !errors.Is(err, ErrServerClosed) {
		t.Errorf("Send to an exited server = %v, want ErrServerClosed", err)
	}
}

func TestStdioCloseEscalates(t *testing.T) {
	const grace = 300 * time.Millisecond
	tests := []struct {
		mode       string
		minTime    time.Duration
		wantSignal syscall.Signal // 0: exited by itself
	}{
		{"echo", 0, 0},
		{"stubborn-eof", grace, syscall.SIGTERM},
		{"stubborn-term", 2 * grace, syscall.SIGKILL},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			c := dialChild(t, tt.mode, WithGrace(grace))
			// Make sure the child is up and has set up its signal handling.
			c.Send(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), SendOptions{})
			recvAnswer(t, c, "1")
			start := time.Now()
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			took := time.Since(start)
			if took < tt.minTime || took > tt.minTime+grace+2*time.Second {
				t.Errorf("Close took %v, want about %v", took, tt.minTime)
			}
			var ee *exec.ExitError
			err := c.ExitErr()
			switch {
			case tt.wantSignal == 0 && err != nil:
				t.Errorf("ExitErr = %v, want a clean exit", err)
			case tt.wantSignal != 0 && (!errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != tt.wantSignal):
				t.Errorf("ExitErr = %v, want death by %v", err, tt.wantSignal)
			}
			if err := c.Close(); err != nil {
				t.Errorf("second Close = %v", err)
			}
		})
	}
}

// TestStdioCloseStopNow: once the WithStopNow context has ended, Close
// kills a server that ignores stdin's end and SIGTERM at once instead of
// waiting two graces (of a minute here).
func TestStdioCloseStopNow(t *testing.T) {
	now, stop := context.WithCancel(context.Background())
	c := dialChild(t, "stubborn-term", WithGrace(time.Minute), WithStopNow(now))
	c.Send(context.Background(), []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), SendOptions{})
	recvAnswer(t, c, "1")
	stop()
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Close still waiting 20 s after the stop-now context ended")
	}
	var ee *exec.ExitError
	if err := c.ExitErr(); !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("ExitErr = %v, want death by SIGKILL", err)
	}
}

func TestStdioCloseUnblocksRecvAndSend(t *testing.T) {
	c := dialChild(t, "noread", WithGrace(100*time.Millisecond))
	recvErr := make(chan error, 1)
	go func() {
		_, err := c.Recv(context.Background())
		recvErr <- err
	}()
	sendErr := make(chan error, 1)
	go func() {
		// Larger than a pipe buffer: blocks, the child does not read.
		big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("z", 4<<20) + `"}}`
		_, err := c.Send(context.Background(), []byte(big), SendOptions{})
		sendErr <- err
	}()
	time.Sleep(100 * time.Millisecond)
	c.Close()
	for name, ch := range map[string]chan error{"Recv": recvErr, "Send": sendErr} {
		select {
		case err := <-ch:
			if !errors.Is(err, ErrClosed) {
				t.Errorf("%s after Close = %v, want ErrClosed", name, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s still blocked after Close", name)
		}
	}
	if _, err := c.Send(context.Background(), []byte(`{}`), SendOptions{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Send after Close = %v", err)
	}
}

// TestStdioSendContextTimeout: a write the server does not take ends at
// its deadline, given as the context's or as SendOptions.Deadline.
func TestStdioSendContextTimeout(t *testing.T) {
	for _, byOption := range []bool{false, true} {
		t.Run(fmt.Sprintf("SendOptions.Deadline=%v", byOption), func(t *testing.T) {
			c := dialChild(t, "noread", WithGrace(100*time.Millisecond))
			ctx, opt := context.Background(), SendOptions{}
			if byOption {
				opt.Deadline = time.Now().Add(200 * time.Millisecond)
			} else {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, 200*time.Millisecond)
				defer cancel()
			}
			big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("z", 4<<20) + `"}}`
			start := time.Now()
			_, err := c.Send(ctx, []byte(big), opt)
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Send = %v, want a deadline error", err)
			}
			if time.Since(start) > 3*time.Second {
				t.Errorf("Send took %v to notice its deadline", time.Since(start))
			}
			// Part of the line went out: the connection is broken for good,
			// and a later Send fails at once with that, not with a timeout
			// (a load generator takes a timeout for a wait already spent).
			if _, err := c.Send(context.Background(), []byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}`), SendOptions{}); err == nil || !strings.Contains(err.Error(), "broken") ||
				errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Send after a cut line = %v, want a broken-connection error that is no deadline", err)
			}
		})
	}
}

func TestDialStdioErrors(t *testing.T) {
	ctx := context.Background()
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		argv []string
		opts []Option
		want string
	}{
		{"empty argv", ctx, nil, nil, "empty command"},
		{"missing program", ctx, []string{"/nonexistent/mcp-server"}, nil, "no such file"},
		{"cancelled", cancelled, []string{os.Args[0]}, nil, "context canceled"},
		{"bad env", ctx, []string{os.Args[0]}, []Option{WithEnv("NOEQUALS")}, "not KEY=value"},
		{"bad grace", ctx, []string{os.Args[0]}, []Option{WithGrace(-1)}, "not positive"},
		{"http option", ctx, []string{os.Args[0]}, []Option{WithGetStream()}, "does not apply"},
		{"nil option", ctx, []string{os.Args[0]}, []Option{nil}, "nil option"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := DialStdio(tt.ctx, tt.argv, tt.opts...)
			if err == nil {
				c.Close()
				t.Fatal("DialStdio succeeded")
			}
			if !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q, want one line containing %q", err, tt.want)
			}
		})
	}
}

func TestStdioPid(t *testing.T) {
	c := dialChild(t, "echo")
	if c.Pid() <= 0 {
		t.Fatalf("Pid = %d", c.Pid())
	}
	// The child leads its own process group.
	pgid, err := syscall.Getpgid(c.Pid())
	if err != nil || pgid != c.Pid() {
		t.Errorf("pgid = %d, %v; want %d", pgid, err, c.Pid())
	}
}
