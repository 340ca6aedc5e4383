package capture

import (
	"bufio"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestHTTPLeanWaitExpire: the watch loop's sweep cuts a connection's wait
// for a request once it has run past its time, and only then, and tells
// when the wait is due otherwise; setReadBy reports the cut.
func TestHTTPLeanWaitExpire(t *testing.T) {
	tests := []struct {
		name     string
		readBy   int64 // 0: no wait runs
		now      int64
		wantCut  bool
		wantNext int64 // when the sweep says something is due next
	}{
		{"past its time", 100, 200, true, math.MaxInt64},
		{"at its time", 200, 200, true, math.MaxInt64},
		{"before its time", 300, 200, false, 300},
		{"no wait", 0, 200, false, math.MaxInt64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := NewHTTPProxy("http://127.0.0.1:1", &memTape{})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			s := &leanServer{p: p, conns: make(map[*leanConn]bool), start: time.Now()}
			client, server := net.Pipe()
			defer client.Close()
			lc := newLeanConn(s, server)
			defer lc.c.Close()
			lc.setReadBy(tt.readBy)
			if next := lc.sweep(tt.now, true); next != tt.wantNext {
				t.Errorf("sweep: next due %d, want %d", next, tt.wantNext)
			}
			peeked := make(chan error, 1)
			go func() { _, err := lc.br.Peek(1); peeked <- err }()
			if !tt.wantCut {
				// Not cut: the read waits for the client's bytes.
				select {
				case err := <-peeked:
					t.Fatalf("read ended before any byte came: %v", err)
				case <-time.After(50 * time.Millisecond):
				}
				io.WriteString(client, "G")
				if err := <-peeked; err != nil {
					t.Fatalf("read after a byte: %v", err)
				}
			} else if err := <-peeked; !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("read of a cut wait: %v, want %v", err, os.ErrDeadlineExceeded)
			}
			if cut := lc.setReadBy(0); cut != tt.wantCut {
				t.Errorf("setReadBy reports cut %v, want %v", cut, tt.wantCut)
			}
			if cut := lc.setReadBy(0); cut {
				t.Error("a wait ended stays cut")
			}
		})
	}
}

// TestHTTPLeanWholeHeadNoDeadline: a request head that came whole is read
// without setting a read deadline (no timer per request); one that came
// in part still gets the head timeout (TestHTTPLeanReviewHeadTimeout).
func TestHTTPLeanWholeHeadNoDeadline(t *testing.T) {
	up := upstream(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	p, err := NewHTTPProxy(up.URL, &memTape{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dl := &countingListener{Listener: ln, conns: make(chan *countingConn, 1)}
	s := &leanServer{p: p, ln: dl, conns: make(map[*leanConn]bool), fallback: newHandoffListener(ln.Addr()), start: time.Now()}
	go s.accept()
	defer func() {
		ln.Close()
		s.closeAll()
		s.wg.Wait()
		p.Close()
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	dc := <-dl.conns
	br := bufio.NewReader(c)
	for i := range 3 {
		io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}")
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("response %d: %s", i, resp.Status)
		}
	}
	if n := dc.sets.Load(); n != 0 {
		t.Errorf("%d read deadlines set for whole heads, want 0", n)
	}
	// A head that comes in part is read under the head timeout.
	// The second part goes once the proxy has read the first: a fixed
	// sleep for that let a loaded machine read both parts at once.
	reads := dc.reads.Load()
	io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: h\r\n")
	for deadline := time.Now().Add(10 * time.Second); dc.reads.Load() == reads; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the proxy did not read the first part of the head")
		}
	}
	io.WriteString(c, "Content-Length: 2\r\n\r\n{}")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("response to a head in parts: %v", err)
	}
	resp.Body.Close()
	if n := dc.sets.Load(); n != 1 {
		t.Errorf("%d read deadlines set for a head in parts, want 1", n)
	}
}

// countingListener hands over the connections it accepts, which count
// the read deadlines set on them (a zero one, clearing, not counted) and
// the reads that returned bytes.
type countingListener struct {
	net.Listener
	conns chan *countingConn
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	cc := &countingConn{Conn: c}
	l.conns <- cc
	return cc, nil
}

type countingConn struct {
	net.Conn
	sets  atomic.Int64
	reads atomic.Int64 // reads that returned bytes
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.reads.Add(1)
	}
	return n, err
}

func (c *countingConn) SetReadDeadline(t time.Time) error {
	if !t.IsZero() {
		c.sets.Add(1)
	}
	return c.Conn.SetReadDeadline(t)
}

// TestHTTPLeanIdleNoWakes: the watch loop sleeps while nothing needs it.
// A proxy whose keep-alive connections wait idle for their next request
// does not wake (a ticker of watchDelay woke it 40 times a second): their
// waits are due minutes later. An exchange that waits for a slow upstream
// wakes it again, to watch its client.
func TestHTTPLeanIdleNoWakes(t *testing.T) {
	release := make(chan struct{})
	up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/slow" {
			<-release
		}
		io.WriteString(w, "{}")
	}))
	defer close(release)
	var sweeps atomic.Int64
	rig := startProxy(t, up.URL, withWatchHook(func() { sweeps.Add(1) }))
	const post = "POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
	for range 3 { // three keep-alive connections, idle after an exchange each
		c := dialRig(t, rig)
		if resp, _ := rawExchange(t, c, bufio.NewReader(c), post, "POST"); resp.StatusCode != http.StatusOK {
			t.Fatalf("POST: %s", resp.Status)
		}
	}
	// The loop may still wake for the exchanges' watchDelay; then it sleeps.
	quiet := func(d time.Duration) bool {
		n := sweeps.Load()
		time.Sleep(d)
		return sweeps.Load() == n
	}
	for deadline := time.Now().Add(5 * time.Second); !quiet(4 * watchDelay); {
		if time.Now().After(deadline) {
			t.Fatalf("the watch loop keeps waking with every connection idle (%d sweeps)", sweeps.Load())
		}
	}
	before := sweeps.Load()
	time.Sleep(20 * watchDelay)
	if n := sweeps.Load() - before; n != 0 {
		t.Errorf("the watch loop woke %d times in %v with every connection idle, want 0", n, 20*watchDelay)
	}
	// A slow exchange needs the loop: its client is watched after watchDelay.
	c := dialRig(t, rig)
	io.WriteString(c, strings.Replace(post, "/mcp", "/slow", 1))
	for deadline := time.Now().Add(5 * time.Second); sweeps.Load() == before; time.Sleep(watchDelay) {
		if time.Now().After(deadline) {
			t.Fatal("the watch loop did not wake for an exchange waiting for its upstream")
		}
	}
}
