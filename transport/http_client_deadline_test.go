package transport

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestSendDeadline: SendOptions.Deadline ends an HTTP exchange as a
// deadline of its context would, on the lean path and through net/http:
// an answer whose head never comes fails Send with
// context.DeadlineExceeded, an event stream that stalls ends with it, an
// answer in time is not affected.
func TestSendDeadline(t *testing.T) {
	const answer = `{"jsonrpc":"2.0","id":1,"result":{}}`
	release := make(chan struct{})
	defer close(release)
	srv := newRawServer(t, func(nc net.Conn, br *bufio.Reader) {
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			switch req.Header.Get("X-Answer") {
			case "json":
				io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 36\r\n\r\n"+answer)
				continue
			case "stream":
				io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
			}
			<-release // no head, or a stream that stalls
			return
		}
	})
	for _, tt := range []struct {
		name, answer string
		opts         []ClientOption
	}{
		{"lean json", "json", nil},
		{"lean stall", "stall", nil},
		{"lean stream", "stream", nil},
		{"net/http json", "json", []ClientOption{WithNetHTTPOnly()}},
		{"net/http stall", "stall", []ClientOption{WithNetHTTPOnly()}},
		{"net/http stream", "stream", []ClientOption{WithNetHTTPOnly()}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := DialHTTP(context.Background(), srv.url, WithHTTPClient(leanClient(t, tt.opts...)))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			frame := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
			// dial before the deadline starts: it bounds the exchange, not
			// the connection's set-up (on a loaded machine a dial can take
			// the 50 ms)
			if _, err := c.Send(context.Background(), frame, SendOptions{Header: http.Header{"X-Answer": {"json"}}}); err != nil {
				t.Fatal(err)
			}
			recvTimeout(t, c, 5*time.Second)
			conns := srv.accepted.Load()
			// an answer in time gets a deadline it meets even when the
			// machine stalls for a while; the others get 50 ms
			wait := 50 * time.Millisecond
			if tt.answer == "json" {
				wait = 500 * time.Millisecond
			}
			opt := SendOptions{Header: http.Header{"X-Answer": {tt.answer}}, Deadline: time.Now().Add(wait)}
			start := time.Now()
			ex, err := c.Send(context.Background(), frame, opt)
			switch tt.answer {
			case "json":
				if err != nil {
					t.Fatal(err)
				}
				if in := recvTimeout(t, c, 5*time.Second); string(in.Frame) != answer {
					t.Errorf("frame %q", in.Frame)
				}
				time.Sleep(time.Until(opt.Deadline) + 50*time.Millisecond) // past the deadline
				if err := ex.Err(); err != nil {
					t.Errorf("exchange answered in time ended with %v", err)
				}
			case "stall":
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("Send: %v, want context.DeadlineExceeded", err)
				}
			case "stream":
				if err != nil {
					t.Fatal(err)
				}
				select {
				case <-ex.Done():
				case <-time.After(5 * time.Second):
					t.Fatal("the stream outlived its deadline")
				}
				if !errors.Is(ex.Err(), context.DeadlineExceeded) {
					t.Errorf("stream ended with %v, want context.DeadlineExceeded", ex.Err())
				}
			}
			if d := time.Since(start); tt.answer != "json" && d < 40*time.Millisecond {
				t.Errorf("ended after %v, before its deadline", d)
			}
			if n := srv.accepted.Load(); n != conns {
				t.Errorf("%d connections dialled within the deadline, want the one dialled before", n-conns)
			}
		})
	}
}

// TestSendDeadlineAllocs: a request bounded by SendOptions.Deadline costs
// fewer allocations than one bounded by a context of the caller's (the
// exchange's own context carries the deadline, with no context between).
func TestSendDeadlineAllocs(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	defer srv.Close()
	c, err := DialHTTP(context.Background(), srv.URL, WithHTTPClient(leanClient(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	root, cancel := context.WithCancel(context.Background())
	defer cancel()
	frame := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	roundTrip := func(ctx context.Context, opt SendOptions) {
		if _, err := c.Send(ctx, frame, opt); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Recv(ctx); err != nil {
			t.Fatal(err)
		}
	}
	withContext := testing.AllocsPerRun(200, func() {
		ctx, cancel := context.WithTimeout(root, time.Minute)
		roundTrip(ctx, SendOptions{})
		cancel()
	})
	withDeadline := testing.AllocsPerRun(200, func() {
		roundTrip(root, SendOptions{Deadline: time.Now().Add(time.Minute)})
	})
	if withDeadline > withContext-3 {
		t.Errorf("%.1f allocations per request with SendOptions.Deadline, %.1f with a context of the caller's: want at least 3 fewer", withDeadline, withContext)
	}
	t.Logf("allocations per request: %.1f with a context, %.1f with SendOptions.Deadline", withContext, withDeadline)
}
