package capture

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// blockedUpstream is an upstream that reads each request and never
// answers it; arrived gets a value as each one comes.
func blockedUpstream(t *testing.T) (url string, arrived <-chan struct{}) {
	t.Helper()
	c := make(chan struct{}, 4)
	up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		c <- struct{}{}
		<-r.Context().Done()
	}))
	return up.URL + "/mcp", c
}

// serveShutdown serves a proxy to up with opts on a loopback port, posts
// one request that up never answers and, once it arrived, ends Serve's
// context. It returns the proxy, Serve's result and the client's.
func serveShutdown(t *testing.T, up string, arrived <-chan struct{}, opts ...HTTPOption) (p *HTTPProxy, served <-chan error, client <-chan error) {
	t.Helper()
	p, err := NewHTTPProxy(up, &memTape{}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := make(chan error, 1)
	go func() { s <- p.Serve(ctx, ln) }()
	c := make(chan error, 1)
	go func() {
		resp, err := freshClient(t).Post("http://"+ln.Addr().String()+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		if err == nil {
			resp.Body.Close()
			err = &unexpectedResponse{resp.Status}
		}
		c <- err
	}()
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the request did not reach the upstream within 10 s")
	}
	cancel()
	return p, s, c
}

// unexpectedResponse is a response the client of serveShutdown got.
type unexpectedResponse struct{ status string }

func (e *unexpectedResponse) Error() string { return "got a response: " + e.status }

// TestHTTPShutdownCut: ending the WithShutdownCut context cuts the
// shutdown grace short (a second Ctrl-C in mcptape record): Serve returns
// at once, not after the grace.
func TestHTTPShutdownCut(t *testing.T) {
	for _, path := range bothPaths {
		t.Run(path.name, func(t *testing.T) {
			up, arrived := blockedUpstream(t)
			cut, cutNow := context.WithCancel(context.Background())
			defer cutNow()
			_, served, _ := serveShutdown(t, up, arrived, append([]HTTPOption{WithShutdownGrace(time.Minute), WithShutdownCut(cut)}, path.opts...)...)
			select {
			case err := <-served:
				t.Fatalf("Serve returned before the cut, during a grace of a minute: %v", err)
			case <-time.After(50 * time.Millisecond):
			}
			cutNow()
			select {
			case err := <-served:
				if err != nil {
					t.Errorf("Serve: %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Serve did not return within 5 s of the cut")
			}
		})
	}
}
