package transport

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

func frameN(i int) Incoming { return Incoming{Frame: fmt.Appendf(nil, "%d", i)} }

func TestInboxOrderAndEnd(t *testing.T) {
	b := newInbox(4)
	ctx := context.Background()
	for i := range 10 { // put ignores the limit
		if !b.put(frameN(i)) {
			t.Fatal("put refused")
		}
	}
	for i := range 5 {
		in, err := b.get(ctx)
		if err != nil || string(in.Frame) != fmt.Sprint(i) {
			t.Fatalf("get %d = %s, %v", i, in.Frame, err)
		}
	}
	end := errors.New("the end")
	b.finish(end)
	b.finish(errors.New("ignored"))
	if b.put(frameN(99)) {
		t.Error("put accepted after finish")
	}
	for i := 5; i < 10; i++ { // queued frames first
		if in, err := b.get(ctx); err != nil || string(in.Frame) != fmt.Sprint(i) {
			t.Fatalf("get %d = %s, %v", i, in.Frame, err)
		}
	}
	for range 2 {
		if _, err := b.get(ctx); err != end {
			t.Fatalf("get after the end = %v", err)
		}
	}
}

func TestInboxPutWaitBackpressure(t *testing.T) {
	b := newInbox(3)
	ctx := context.Background()
	done := make(chan int)
	go func() {
		for i := range 20 {
			if err := b.putWait(ctx, frameN(i)); err != nil {
				t.Error(err)
				return
			}
			done <- i
		}
		close(done)
	}()
	// The producer gets 3 ahead, then waits.
	for range 3 {
		<-done
	}
	select {
	case i := <-done:
		t.Fatalf("producer put frame %d past the limit", i)
	case <-time.After(50 * time.Millisecond):
	}
	for i := range 20 {
		in, err := b.get(ctx)
		if err != nil || string(in.Frame) != fmt.Sprint(i) {
			t.Fatalf("get %d = %s, %v", i, in.Frame, err)
		}
		for range done {
			break
		}
	}
}

func TestInboxShutAndContexts(t *testing.T) {
	b := newInbox(1)
	b.put(frameN(0))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := b.putWait(ctx, frameN(1)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("putWait on a full inbox = %v", err)
	}
	errs := make(chan error, 2)
	go func() { errs <- b.putWait(context.Background(), frameN(2)) }()
	b.get(context.Background())
	<-errs // room freed: the put went through
	go func() { errs <- b.putWait(context.Background(), frameN(3)) }()
	time.Sleep(10 * time.Millisecond)
	b.shut()
	b.shut()
	if err := <-errs; !errors.Is(err, ErrClosed) {
		t.Errorf("putWait after shut = %v", err)
	}
	if _, err := b.get(context.Background()); !errors.Is(err, ErrClosed) {
		t.Errorf("get after shut = %v (queued frames are dropped)", err)
	}
	empty := newInbox(1)
	ctx2, cancel2 := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel2()
	if _, err := empty.get(ctx2); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("get on an empty inbox = %v", err)
	}
}

func TestInboxManyReceivers(t *testing.T) {
	b := newInbox(8)
	const n, receivers = 2000, 4
	var mu sync.Mutex
	got := map[string]int{}
	var wg sync.WaitGroup
	for range receivers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				in, err := b.get(context.Background())
				if err != nil {
					return
				}
				mu.Lock()
				got[string(in.Frame)]++
				mu.Unlock()
			}
		}()
	}
	for i := range n {
		if i%2 == 0 {
			b.put(frameN(i))
		} else if err := b.putWait(context.Background(), frameN(i)); err != nil {
			t.Fatal(err)
		}
	}
	b.finish(errors.New("end"))
	wg.Wait()
	if len(got) != n {
		t.Fatalf("received %d distinct frames, want %d", len(got), n)
	}
	for k, c := range got {
		if c != 1 {
			t.Fatalf("frame %s received %d times", k, c)
		}
	}
}

func TestStatusError(t *testing.T) {
	tests := []struct {
		err     *StatusError
		want    string
		expired bool
	}{
		{&StatusError{Method: "POST", URL: "http://h/mcp", Status: 404, Body: []byte("session not found\n"), Expired: true},
			"transport: POST http://h/mcp: 404 Not Found (session expired): session not found", true},
		{&StatusError{Method: "GET", URL: "http://h/mcp", Status: 405},
			"transport: GET http://h/mcp: 405 Method Not Allowed", false},
		{&StatusError{Method: "POST", URL: "u", Status: 400, Body: []byte("a\r\n\tb\x00\xffc  d")},
			"transport: POST u: 400 Bad Request: a b \ufffdc d", false},
		// A legacy HTTP+SSE stream URL given as a Streamable HTTP one.
		{&StatusError{Method: "POST", URL: "http://h/sse", Status: 405, Body: []byte("Method Not Allowed")},
			"transport: POST http://h/sse: 405 Method Not Allowed: Method Not Allowed (the stream URL of a legacy HTTP+SSE server? it is given with --sse)", false},
		{&StatusError{Method: "POST", URL: "http://h/sse?x=1", Status: 404},
			"transport: POST http://h/sse?x=1: 404 Not Found (the stream URL of a legacy HTTP+SSE server? it is given with --sse)", false},
		{&StatusError{Method: "POST", URL: "http://h/message?sessionId=1", Status: 404},
			"transport: POST http://h/message?sessionId=1: 404 Not Found", false},
		// A server's root given for its MCP endpoint.
		{&StatusError{Method: "POST", URL: "http://h:8080", Status: 404, Body: []byte("404 page not found\n")},
			"transport: POST http://h:8080: 404 Not Found: 404 page not found (the URL has no path: MCP servers usually answer at one, such as /mcp)", false},
		{&StatusError{Method: "POST", URL: "http://h/", Status: 404},
			"transport: POST http://h/: 404 Not Found (the URL has no path: MCP servers usually answer at one, such as /mcp)", false},
		{&StatusError{Method: "POST", URL: "http://h/", Status: 405},
			"transport: POST http://h/: 405 Method Not Allowed", false},
		{&StatusError{Method: "GET", URL: "http://h", Status: 404},
			"transport: GET http://h: 404 Not Found", false},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
		if errors.Is(tt.err, ErrSessionExpired) != tt.expired {
			t.Errorf("%v: Is(ErrSessionExpired) != %v", tt.err, tt.expired)
		}
	}
	long := (&StatusError{Method: "POST", URL: "u", Status: 500, Body: []byte(strings.Repeat("x", 1000))}).Error()
	if len(long) > 300 || !strings.HasSuffix(long, "...") {
		t.Errorf("long body message (%d bytes) %q", len(long), long)
	}
}

func TestExchangeBeforeDone(t *testing.T) {
	ex := &Exchange{}
	if ex.Err() != nil || ex.Frames() != 0 || !ex.Ended().IsZero() {
		t.Error("an unfinished exchange reports results")
	}
	ex.CloseStream() // no cancel function: nothing to do
	ex.frames = 2
	ex.finish(ErrStreamClosed)
	if !errors.Is(ex.Err(), ErrStreamClosed) || ex.Frames() != 2 || ex.Ended().IsZero() {
		t.Error("a finished exchange lost its results")
	}
}

func TestOptionsApplyTo(t *testing.T) {
	stdioOnly := []Option{WithEnv("A=b"), WithDir("/"), WithStderr(&strings.Builder{})}
	httpOnly := []Option{WithGetStream(), WithoutDelete(), WithProtocolVersion("2025-06-18")}
	both := []Option{WithHTTPClient(&http.Client{}), WithHeader(nil)}
	all := []Option{WithGrace(time.Second), WithMaxFrame(10)}
	check := func(dial string, k optKind, opts []Option, ok bool) {
		t.Helper()
		for _, opt := range opts {
			_, err := newOptions(dial, k, []Option{opt})
			if (err == nil) != ok {
				t.Errorf("%s: option accepted=%v, want %v (err %v)", dial, err == nil, ok, err)
			}
		}
	}
	check("stdio", forStdio, stdioOnly, true)
	check("stdio", forStdio, httpOnly, false)
	check("stdio", forStdio, both, false)
	check("stdio", forStdio, all, true)
	check("http", forHTTP, stdioOnly, false)
	check("http", forHTTP, httpOnly, true)
	check("http", forHTTP, both, true)
	check("legacy", forLegacy, httpOnly, false)
	check("legacy", forLegacy, both, true)
	check("legacy", forLegacy, all, true)
}

func TestValidVersion(t *testing.T) {
	for v, want := range map[string]bool{
		"2025-06-18": true, "2026-07-28": true, "2025-6-18": false, "2025/06/18": false,
		"latest": false, "": false, "2025-06-1x": false,
	} {
		if validVersion(v) != want {
			t.Errorf("validVersion(%q) != %v", v, want)
		}
	}
}

// TestExchangeAfterDone: a function given before the response completes
// runs once, when finish is called (after Done is closed); one given after
// runs at once; so does one given to a stdio exchange, complete from the
// start.
func TestExchangeAfterDone(t *testing.T) {
	ex := &Exchange{}
	var order []string
	ex.AfterDone(func() {
		select {
		case <-ex.Done():
			order = append(order, "first")
		default:
			t.Error("AfterDone function ran before Done was closed")
		}
	})
	ex.AfterDone(func() { order = append(order, "second") })
	if len(order) != 0 {
		t.Fatalf("ran before the response completed: %v", order)
	}
	ex.finish(nil)
	ex.AfterDone(func() { order = append(order, "late") })
	if want := []string{"first", "second", "late"}; !slices.Equal(order, want) {
		t.Errorf("ran %v, want %v", order, want)
	}
	ran := 0
	(&Exchange{fin: true}).AfterDone(func() { ran++ })
	if ran != 1 {
		t.Errorf("stdio exchange: ran %d times, want 1", ran)
	}
}
