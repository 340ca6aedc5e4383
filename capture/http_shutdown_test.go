package capture

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/tape"
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

// serveShutdown serves a proxy to up with opts (startProxy), posts one
// request that up never answers and, once it arrived, shuts the proxy
// down. It returns the proxy's rig, a channel closed once Serve returned
// (its error is the rig's to report) and the client's result (an error;
// *unexpectedResponse when it got a response).
func serveShutdown(t *testing.T, up string, arrived <-chan struct{}, opts ...HTTPOption) (rig *proxyRig, served <-chan struct{}, client <-chan error) {
	t.Helper()
	rig = startProxy(t, up, opts...)
	c := make(chan error, 1)
	go func() {
		resp, err := freshClient(t).Post(rig.url+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
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
	s := make(chan struct{})
	go func() { rig.stop(); close(s) }()
	return rig, s, c
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
			case <-served:
				t.Fatal("Serve returned before the cut, during a grace of a minute")
			case <-time.After(50 * time.Millisecond):
			}
			cutNow()
			select {
			case <-served:
			case <-time.After(5 * time.Second):
				t.Fatal("Serve did not return within 5 s of the cut")
			}
		})
	}
}

// TestHTTPShutdownCutExchange: an exchange the shutdown cuts before the
// upstream answered gets no response (the client sees its connection
// close) and the tape says just that: its end has no status, closed by
// the proxy, the error says the client got none; no "error" event blames
// the upstream and no upstream error is counted. (The tape said 502
// "closed by proxy", a response never sent: the lean path closed the
// connection, net/http's raced it.)
func TestHTTPShutdownCutExchange(t *testing.T) {
	for _, path := range bothPaths {
		t.Run(path.name, func(t *testing.T) {
			up, arrived := blockedUpstream(t)
			rig, served, client := serveShutdown(t, up, arrived, append([]HTTPOption{WithShutdownGrace(10 * time.Millisecond)}, path.opts...)...)
			<-served
			var resp *unexpectedResponse
			if err := <-client; err == nil || errors.As(err, &resp) {
				t.Errorf("client: %v; want no response, the connection closed", err)
			}
			recs := rig.tape.records()
			ends := httpEvents(t, recs, "end")
			if len(ends) != 1 {
				t.Fatalf("%d end events, want 1", len(ends))
			}
			if e := ends[0]; e.Status != 0 || e.ClosedBy != ClosedByProxy || e.Error != tape.ShutdownCutError {
				t.Errorf("end event: status %d, closed by %q, error %q; want no status, closed by the proxy, %q (which inspect knows)", e.Status, e.ClosedBy, e.Error, tape.ShutdownCutError)
			}
			if errs := events(recs, tape.EventError); len(errs) != 0 {
				t.Errorf("error events %s: the upstream did not fail", errs[0].Data)
			}
			if n := rig.proxy.Stats().UpstreamErrors; n != 0 {
				t.Errorf("%d upstream errors counted, want 0", n)
			}
			if n := len(msgs(recs, tape.ClientToServer)); n != 1 {
				t.Errorf("%d client messages recorded, want the request", n)
			}
		})
	}
}
