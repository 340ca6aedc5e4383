package transport

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// errHeldWrite is the error of a held write made to fail.
var errHeldWrite = errors.New("held write failed")

// heldWrites holds the first write on the connections of its dialer until
// release is closed; entered is closed when that write begins. With fail,
// that write fails (closing its connection) instead of going out.
type heldWrites struct {
	once     sync.Once
	entered  chan struct{}
	release  chan struct{}
	released atomic.Bool // set just before release is closed
	fail     bool
}

func newHeldWrites(fail bool) *heldWrites {
	return &heldWrites{entered: make(chan struct{}), release: make(chan struct{}), fail: fail}
}

// dial dials TCP and wraps the connection.
func (h *heldWrites) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &heldConn{Conn: nc, h: h}, nil
}

// let releases the held write.
func (h *heldWrites) let() {
	h.released.Store(true)
	close(h.release)
}

// heldConn is a connection of a heldWrites dialer.
type heldConn struct {
	net.Conn
	h *heldWrites
}

func (c *heldConn) Write(p []byte) (int, error) {
	first := false
	c.h.once.Do(func() { first = true })
	if first {
		close(c.h.entered)
		<-c.h.release
		if c.h.fail {
			c.Conn.Close()
			return 0, errHeldWrite
		}
	}
	return c.Conn.Write(p)
}

// TestSendWrittenHTTP sends a POST whose write is held on its way out to
// a server that holds its answer's headers until told: SendOptions.Written
// must not be called before the write is let go, must be called once it
// went out while Send still waits for the answer's head (not only when
// Send returns), and exactly once. A write that fails never calls it. On
// the lean path and through net/http (its httptrace WroteRequest).
func TestSendWrittenHTTP(t *testing.T) {
	tests := []struct {
		name string
		// client returns an HTTP client dialling with dial
		client func(t *testing.T, dial func(context.Context, string, string) (net.Conn, error)) *http.Client
		fail   bool
	}{
		{"lean", leanDialing, false},
		{"lean write fails", leanDialing, true},
		{"net/http", netHTTPDialing, false},
		{"net/http write fails", netHTTPDialing, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answer := make(chan struct{})
			const body = `{"jsonrpc":"2.0","id":1,"result":{}}`
			srv := newRawServer(t, func(nc net.Conn, br *bufio.Reader) {
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				io.Copy(io.Discard, req.Body)
				<-answer
				io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"+body)
			})
			defer close(answer) // before the server's clean-up waits for it
			held := newHeldWrites(tt.fail)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c, err := DialHTTP(ctx, srv.url, WithHTTPClient(tt.client(t, held.dial)))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			var calls atomic.Int32
			var early atomic.Bool
			wrote := make(chan struct{}, 1)
			sent := make(chan error, 1)
			go func() {
				_, err := c.Send(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), SendOptions{Written: func() {
					calls.Add(1)
					early.Store(!held.released.Load())
					wrote <- struct{}{}
				}})
				sent <- err
			}()
			select {
			case <-held.entered:
			case <-ctx.Done():
				t.Fatal("the request was never written")
			}
			held.let()
			if tt.fail {
				if err := <-sent; err == nil {
					t.Fatal("Send succeeded though its write failed")
				}
				if n := calls.Load(); n != 0 {
					t.Errorf("Written called %d times for a request never written", n)
				}
				return
			}
			select {
			case <-wrote:
			case err := <-sent:
				t.Fatalf("Send returned (%v) before the server answered", err)
			case <-ctx.Done():
				t.Fatal("Written not called while the server held its answer's headers")
			}
			if early.Load() {
				t.Error("Written called before the request's write went out")
			}
			answer <- struct{}{}
			if err := <-sent; err != nil {
				t.Fatal(err)
			}
			if n := calls.Load(); n != 1 {
				t.Errorf("Written called %d times, want once", n)
			}
		})
	}
}

// leanDialing returns a client of NewHTTPClient whose lean path dials
// with dial.
func leanDialing(t *testing.T, dial func(context.Context, string, string) (net.Conn, error)) *http.Client {
	c := leanClient(t)
	c.Transport.(*leanTransport).dial = dial
	return c
}

// netHTTPDialing returns a client of NewHTTPClient with net/http only,
// dialling with dial.
func netHTTPDialing(t *testing.T, dial func(context.Context, string, string) (net.Conn, error)) *http.Client {
	c := leanClient(t, WithNetHTTPOnly())
	c.Transport.(*http.Transport).DialContext = dial
	return c
}
