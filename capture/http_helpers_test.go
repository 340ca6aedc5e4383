package capture

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/tape"
)

// proxyRig is an HTTPProxy served on a loopback port in front of an
// upstream, recording into memory.
type proxyRig struct {
	proxy *HTTPProxy
	tape  *memTape
	url   string // http://127.0.0.1:PORT of the proxy
	addr  string // its host:port
	stop  func() // shuts the proxy down and waits for Serve (idempotent)
}

// startProxy serves a proxy to upstreamURL; it is shut down at cleanup.
func startProxy(t testing.TB, upstreamURL string, opts ...HTTPOption) *proxyRig {
	t.Helper()
	return startProxyTape(t, upstreamURL, &memTape{}, opts...)
}

// startProxyTape is startProxy recording into rec (rig.tape is set when
// rec is a *memTape).
func startProxyTape(t testing.TB, upstreamURL string, rec RecordWriter, opts ...HTTPOption) *proxyRig {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return startProxyOn(t, ln, upstreamURL, rec, opts...)
}

// startProxyOn is startProxyTape serving on ln.
func startProxyOn(t testing.TB, ln net.Listener, upstreamURL string, rec RecordWriter, opts ...HTTPOption) *proxyRig {
	t.Helper()
	opts = append([]HTTPOption{WithShutdownGrace(100 * time.Millisecond)}, opts...)
	p, err := NewHTTPProxy(upstreamURL, rec, opts...)
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.Serve(ctx, ln) }()
	var served error
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case served = <-done:
		case <-time.After(20 * time.Second):
			t.Errorf("proxy Serve did not return after its context ended")
		}
		if served != nil {
			t.Errorf("Serve: %v", served)
		}
	}
	t.Cleanup(stop)
	mt, _ := rec.(*memTape)
	return &proxyRig{proxy: p, tape: mt, url: "http://" + ln.Addr().String(), addr: ln.Addr().String(), stop: stop}
}

// upstream starts an httptest server with handler h.
func upstream(t testing.TB, h http.Handler) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(h)
	t.Cleanup(s.Close)
	return s
}

// freshClient returns an HTTP client with its own connections, that
// leaves compression alone.
func freshClient(t testing.TB) *http.Client {
	t.Helper()
	tr := &http.Transport{DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// msgs returns the message records, optionally only those of session.
func msgs(recs []tape.Record, dir tape.Direction) []tape.Record {
	var out []tape.Record
	for _, r := range recs {
		if r.Type == tape.TypeMessage && (dir == "" || r.Dir == dir) {
			out = append(out, r)
		}
	}
	return out
}

// httpEvents decodes the "http" events of phase ("" for all).
func httpEvents(t testing.TB, recs []tape.Record, phase string) []HTTPEvent {
	t.Helper()
	var out []HTTPEvent
	for _, r := range events(recs, tape.EventHTTP) {
		var e HTTPEvent
		if err := json.Unmarshal(r.Data, &e); err != nil {
			t.Fatalf("http event %s: %v", r.Data, err)
		}
		if phase == "" || e.Phase == phase {
			out = append(out, e)
		}
	}
	return out
}

// endEventOf returns the "end" event of exchange n.
func endEventOf(t testing.TB, recs []tape.Record, n uint64) (HTTPEvent, bool) {
	t.Helper()
	for _, r := range events(recs, tape.EventHTTP) {
		var e HTTPEvent
		if err := json.Unmarshal(r.Data, &e); err != nil {
			t.Fatal(err)
		}
		if r.Exchange == n && e.Phase == "end" {
			return e, true
		}
	}
	return HTTPEvent{}, false
}

// waitEnded waits until the tape holds the "end" events of at least n
// exchanges and every exchange that wrote one has finished its recording
// (a session's "close" comes after its exchange's "end"), and returns the
// records.
func waitEnded(t testing.TB, rig *proxyRig, n int) []tape.Record {
	t.Helper()
	var recs []tape.Record
	waitFor(t, func() bool {
		// Exchanges count as ended after their end event is out: read
		// first, equal to the end events of the snapshot taken after, it
		// covers every one of them.
		done := rig.proxy.st.ended.Load()
		recs = rig.tape.records()
		ends := len(httpEvents(t, recs, "end"))
		return ends >= n && done == int64(ends)
	})
	return recs
}

// proxyGoroutines returns the stacks of goroutines running the HTTP
// proxy's code.
func proxyGoroutines() []string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "capture.(*HTTPProxy)") || strings.Contains(g, "capture.(*exchange)") ||
			strings.Contains(g, "capture.(*endpointRewriter)") || strings.Contains(g, "capture.newBodyDecoder") ||
			strings.Contains(g, "capture.(*leanConn)") || strings.Contains(g, "capture.(*leanServer)") ||
			strings.Contains(g, "httputil.(*ReverseProxy)") {
			out = append(out, g)
		}
	}
	return out
}

// checkNoProxyGoroutines fails if goroutines of the HTTP proxy are still
// running a few seconds after everything was shut down.
func checkNoProxyGoroutines(t testing.TB) {
	t.Helper()
	var left []string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if left = proxyGoroutines(); len(left) == 0 {
			return
		}
	}
	t.Fatalf("%d proxy goroutines leaked:\n%s", len(left), strings.Join(left, "\n\n"))
}

// dialRig opens a raw client connection to the proxy of rig, closed when
// the test ends.
func dialRig(t testing.TB, rig *proxyRig) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", rig.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// expectUpstreamCancel waits for the time the upstream saw its request
// cancelled (on done) and fails unless it came within a second of since.
func expectUpstreamCancel(t testing.TB, done <-chan time.Time, since time.Time) {
	t.Helper()
	select {
	case at := <-done:
		if d := at.Sub(since); d > time.Second {
			t.Errorf("the upstream saw the cancellation after %v", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream request was not cancelled")
	}
}
