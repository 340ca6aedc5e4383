package transport

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/http1/http1test"
)

// stallServer answers a request with X-Answer: json at once and leaves
// any other without an answer until the client closes the connection.
func stallServer(t *testing.T) *rawServer {
	return newRawServer(t, func(nc net.Conn, br *bufio.Reader) {
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			if req.Header.Get("X-Answer") != "json" {
				io.Copy(io.Discard, br) // until the client closes
				return
			}
			io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 36\r\n\r\n"+`{"jsonrpc":"2.0","id":1,"result":{}}`)
		}
	})
}

var pingFrame = []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)

// TestExchangeEndReachesLeanIO: the end of an exchange whose request is
// on its way over the lean path, with no answer coming, reaches the
// connection's I/O through the exchange's abort hook (no context of the
// exchange's own): Close, the end of the Send context the connection
// watches for all its exchanges, the end of a context an exchange
// watches itself (another's is watched), each fail the Send at once with
// their error, leave the other exchanges in flight, and the connection
// is not reused.
func TestExchangeEndReachesLeanIO(t *testing.T) {
	type end func(c *HTTPConn, cancelWatched, cancelOwn context.CancelFunc)
	for _, tt := range []struct {
		name    string
		own     bool // the exchange's context is not the watched one
		end     end
		want    error
		ctxLeft bool // the other exchange is still in flight after
	}{
		{"close", false, func(c *HTTPConn, _, _ context.CancelFunc) { c.Close() }, ErrClosed, false},
		{"watched context", false, func(_ *HTTPConn, w, _ context.CancelFunc) { w() }, context.Canceled, false},
		{"own context", true, func(_ *HTTPConn, _, o context.CancelFunc) { o() }, context.Canceled, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := stallServer(t)
			c := dialLean(t, srv.url)
			watched, cancelWatched := context.WithCancel(context.Background())
			defer cancelWatched()
			own, cancelOwn := context.WithCancel(context.Background())
			defer cancelOwn()

			// an exchange of the watched context, in flight all along
			first := make(chan error, 1)
			go func() {
				_, err := c.Send(watched, pingFrame, SendOptions{})
				first <- err
			}()
			waitFor(t, func() bool { return srv.accepted.Load() == 1 })
			c.mu.Lock()
			covering := c.watch.done == watched.Done()
			c.mu.Unlock()
			if !covering {
				t.Fatal("the connection does not watch the context of its first exchange")
			}
			ctx := watched
			if tt.own {
				ctx = own
			}
			second := make(chan error, 1)
			go func() {
				_, err := c.Send(ctx, pingFrame, SendOptions{})
				second <- err
			}()
			waitFor(t, func() bool { return srv.accepted.Load() == 2 })
			time.Sleep(20 * time.Millisecond) // both requests on their way
			tt.end(c, cancelWatched, cancelOwn)
			select {
			case err := <-second:
				if !errors.Is(err, tt.want) {
					t.Errorf("Send: %v, want %v", err, tt.want)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the exchange's end did not reach its request")
			}
			if tt.ctxLeft {
				select {
				case err := <-first:
					t.Fatalf("the other exchange ended too: %v", err)
				case <-time.After(50 * time.Millisecond):
				}
				cancelWatched()
			}
			if err := <-first; err == nil {
				t.Error("the first exchange was answered")
			}
			if tt.name == "close" {
				return
			}
			// the ended connections are not reused: a new one answers
			if _, err := c.Send(context.Background(), pingFrame, SendOptions{Header: http.Header{"X-Answer": {"json"}}}); err != nil {
				t.Fatal(err)
			}
			if n := srv.accepted.Load(); n != 3 {
				t.Errorf("%d connections accepted, want 3 (the 2 ended ones not reused)", n)
			}
		})
	}
}

// TestSendWatchMoves: the connection's watch of a Send context moves to
// the context of a new exchange once no exchange in flight needs it, and
// stays while one does.
func TestSendWatchMoves(t *testing.T) {
	srv := stallServer(t)
	c := dialLean(t, srv.url)
	answered := SendOptions{Header: http.Header{"X-Answer": {"json"}}}
	watches := func(ctx context.Context) bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.watch.done == ctx.Done()
	}
	a, cancelA := context.WithCancel(context.Background())
	defer cancelA()
	b, cancelB := context.WithCancel(context.Background())
	defer cancelB()
	if _, err := c.Send(a, pingFrame, answered); err != nil {
		t.Fatal(err)
	}
	if !watches(a) {
		t.Fatal("the first context is not watched")
	}
	if _, err := c.Send(b, pingFrame, answered); err != nil {
		t.Fatal(err)
	}
	if !watches(b) {
		t.Fatal("the watch did not move to the context of the next exchange")
	}
	// an exchange of b in flight keeps the watch on b
	stalled := make(chan error, 1)
	go func() {
		_, err := c.Send(b, pingFrame, SendOptions{})
		stalled <- err
	}()
	waitFor(t, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.watch.covered == 1
	})
	if _, err := c.Send(a, pingFrame, answered); err != nil {
		t.Fatal(err)
	}
	if !watches(b) {
		t.Error("the watch moved away from a context with an exchange in flight")
	}
	cancelB()
	if err := <-stalled; !errors.Is(err, context.Canceled) {
		t.Errorf("Send: %v, want context.Canceled", err)
	}

	// an exchange of the connection's own context (a GET stream's,
	// which Close ends) needs no watch and holds none
	stream := &Exchange{}
	c.startExchange(c.ctx, stream, time.Time{})
	defer c.endExchange(stream)
	if _, err := c.Send(a, pingFrame, answered); err != nil {
		t.Fatal(err)
	}
	if !watches(a) {
		t.Error("an exchange of the connection's own context kept the watch from moving")
	}
	if stream.x.covered != closeOnly || stream.x.unwatch != nil {
		t.Error("an exchange of the connection's own context is watched")
	}
}

// TestSendAllocs bounds the allocations of one JSON exchange on the lean
// path (Send, then Recv of the answer) with a deadline, against a server
// that allocates nothing: the Exchange, the answer's head (its parsed
// response, header map and text), its body reader and the frame read;
// WithoutAnswerHeaders, the head's text alone (the response and header
// map are those of the last answer). The request, its headers and body
// reader are recycled, and the exchange costs no context, timer or
// registration with the Send context: should any of those come back,
// this fails.
func TestSendAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocations")
	}
	url := http1test.ServeJSONRPC(t)
	tests := []struct {
		name string
		opts []Option
		most float64
	}{
		{"answer headers", nil, 7},
		{"without answer headers", []Option{WithoutAnswerHeaders()}, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dialLean(t, url, append([]Option{WithProtocolVersion("2025-06-18")}, tt.opts...)...)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			frame := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`)
			allocs := testing.AllocsPerRun(500, func() {
				if _, err := c.Send(ctx, frame, SendOptions{Deadline: time.Now().Add(time.Minute)}); err != nil {
					t.Fatal(err)
				}
				if _, err := c.Recv(ctx); err != nil {
					t.Fatal(err)
				}
			})
			if allocs > tt.most {
				t.Errorf("%.1f allocations per exchange, want at most %v", allocs, tt.most)
			}
			t.Logf("%.1f allocations per exchange", allocs)
		})
	}
}

// dialLean returns a connection to url over a lean client, closed when
// the test ends.
func dialLean(t *testing.T, url string, opts ...Option) *HTTPConn {
	t.Helper()
	c, err := DialHTTP(context.Background(), url, append([]Option{WithHTTPClient(leanClient(t))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// waitFor waits until cond holds, failing the test after 5 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for start := time.Now(); !cond(); time.Sleep(time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatal("timed out waiting")
		}
	}
}
