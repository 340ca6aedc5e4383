package capture

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
)

// TestHTTPHeadTimeoutOnce: a request head trickled byte by byte
// (slowloris) is cut the head timeout after its first byte, as net/http
// cuts it, not twice that (the lean path used to hand the late head to
// net/http, which granted the time again); a new connection that sends
// nothing is cut the head timeout after its start, as net/http does, not
// after the wait for an idle connection's next request. On both paths.
func TestHTTPHeadTimeoutOnce(t *testing.T) {
	const timeout = 400 * time.Millisecond
	up := upstream(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	trickle := "GET /mcp HTTP/1.1\r\nHost: h\r\nX-Pad: " + strings.Repeat("a", 500)
	tests := []struct {
		name    string
		first   string // a whole request sent first, answered before the trickle
		trickle string
	}{
		{name: "trickled head", trickle: trickle},
		{name: "trickled second head", first: "GET /mcp HTTP/1.1\r\nHost: h\r\n\r\n", trickle: trickle},
		{name: "trickled head after a POST's CRLF", first: "POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}", trickle: "\r\n" + trickle},
		{name: "silent connection"},
	}
	for _, path := range bothPaths {
		rig := startProxy(t, up.URL, append([]HTTPOption{withHeadTimeout(timeout)}, path.opts...)...)
		for _, tt := range tests {
			t.Run(path.name+"/"+tt.name, func(t *testing.T) {
				dialed := time.Now()
				c := dialRig(t, rig)
				br := bufio.NewReader(c)
				if tt.first != "" {
					rawExchange(t, c, br, tt.first, "GET")
				}
				c.SetDeadline(time.Now().Add(20 * timeout))
				start := time.Now()
				if tt.first == "" {
					// A connection's first head has its time from the
					// accept: from a start taken after the dial, a test
					// goroutine late by a tenth of the timeout measured it
					// too short.
					start = dialed
				}
				closed := make(chan time.Duration, 1)
				go func() {
					io.Copy(io.Discard, br)
					closed <- time.Since(start)
				}()
				var took time.Duration
			send:
				for i := 0; ; i++ {
					if i < len(tt.trickle) {
						c.Write([]byte{tt.trickle[i]})
					}
					select {
					case took = <-closed:
						break send
					case <-time.After(timeout / 20):
					}
				}
				// Twice the timeout is what the bug allowed.
				if took < timeout*9/10 || took > timeout*7/4 {
					t.Errorf("the connection closed %v after the head began, want about %v", took.Round(time.Millisecond), timeout)
				}
			})
		}
		rig.stop()
	}
}

// flakyListener fails its first Accepts as a process out of file
// descriptors does (EMFILE), then accepts.
type flakyListener struct {
	net.Listener
	fails atomic.Int32
}

func (l *flakyListener) Accept() (net.Conn, error) {
	if l.fails.Add(-1) >= 0 {
		return nil, &net.OpError{Op: "accept", Net: "tcp", Addr: l.Addr(), Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}

// TestHTTPAcceptOutOfFiles: a listener that fails for want of file
// descriptors does not end the recording: the proxy waits, tries again
// and serves the connections that come next, and says so once (warnf),
// however many failures. On both paths.
func TestHTTPAcceptOutOfFiles(t *testing.T) {
	up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	for _, path := range bothPaths {
		t.Run(path.name, func(t *testing.T) {
			var mu sync.Mutex
			var warnings []string
			warnf := func(format string, args ...any) {
				mu.Lock()
				warnings = append(warnings, fmt.Sprintf(format, args...))
				mu.Unlock()
			}
			opts := append([]HTTPOption{WithShutdownGrace(100 * time.Millisecond), WithLogf(warnf, nil)}, path.opts...)
			p, err := NewHTTPProxy(up.URL, &memTape{}, opts...)
			if err != nil {
				t.Fatal(err)
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			fl := &flakyListener{Listener: ln}
			fl.fails.Store(6)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- p.Serve(ctx, fl) }()
			for i := range 2 {
				resp, err := freshClient(t).Get("http://" + ln.Addr().String() + "/mcp")
				if err != nil {
					t.Fatalf("request %d after EMFILE: %v", i, err)
				}
				if body := peertest.ReadAnswer(t, resp); body != "ok" {
					t.Errorf("answer %q", body)
				}
				fl.fails.Store(3) // and again: no second warning
			}
			select {
			case err := <-done:
				t.Fatalf("Serve returned %v after temporary Accept failures", err)
			default:
			}
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Serve: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(warnings) != 1 || !strings.Contains(warnings[0], "too many open files") || !strings.Contains(warnings[0], "still serving") {
				t.Errorf("warnings %q, want one about the open files", warnings)
			}
		})
	}
}

// TestAcceptBackoff: the waits after failed Accepts are net/http's.
func TestAcceptBackoff(t *testing.T) {
	var got []time.Duration
	var d time.Duration
	for range 10 {
		d = acceptBackoff(d)
		got = append(got, d)
	}
	want := []time.Duration{5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000}
	for i := range want {
		if got[i] != want[i]*time.Millisecond {
			t.Fatalf("waits %v, want %v ms", got, want)
		}
	}
}
