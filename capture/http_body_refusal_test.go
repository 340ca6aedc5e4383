package capture

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/tape"
)

// smuggledRequest follows a malformed body in the tests: a proxy that
// takes it for a request forwards it.
const smuggledRequest = "GET /smuggled HTTP/1.1\r\nHost: h\r\n\r\n"

// TestHTTPMalformedBodyClosesConnection: a request whose chunked body
// breaks its framing is refused with a 400 (not a 502 blaming the
// upstream) when the upstream has not answered yet, and in every case the
// client connection closes after the answer: what follows the break never
// reaches the upstream as a request. The tape notes the malformed request
// without its bytes. On both paths (the lean one hands chunked bodies to
// net/http, which serves the other).
func TestHTTPMalformedBodyClosesConnection(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path)
		mu.Unlock()
		if r.URL.Path == "/early" { // answers before reading the body
			http.NewResponseController(w).EnableFullDuplex()
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, "early")
			return
		}
		io.Copy(io.Discard, r.Body)
	}))
	const head = "POST %s HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
	tests := []struct {
		name   string
		early  bool   // the upstream answers before the body's break
		before string // the body's bytes before the answer (early) or all of them
		after  string // sent once the early answer came
		fault  string // in the answer (when not early) and the tape's note
	}{
		{name: "bad chunk size", before: "ZZ\r\n" + smuggledRequest, fault: "invalid byte in chunk length"},
		{name: "chunk overrun", before: "2\r\nabcd\r\n0\r\n\r\n" + smuggledRequest, fault: "malformed chunked encoding"},
		{name: "malformed trailer", before: "1\r\na\r\n0\r\nSECRET\r\n\r\n" + smuggledRequest, fault: "malformed MIME header"},
		{name: "break after the answer", early: true, before: "1\r\na\r\n", after: "ZZ\r\n" + smuggledRequest, fault: "invalid byte in chunk length"},
	}
	for _, path := range bothPaths {
		rig := startProxy(t, up.URL, path.opts...)
		for _, tt := range tests {
			t.Run(path.name+"/"+tt.name, func(t *testing.T) {
				target := "/mcp"
				if tt.early {
					target = "/early"
				}
				c := dialRig(t, rig)
				br := bufio.NewReader(c)
				resp, body := rawExchange(t, c, br, strings.Replace(head, "%s", target, 1)+tt.before, "POST")
				switch {
				case tt.early && (resp.StatusCode != 200 || body != "early"):
					t.Errorf("answer %d %q, want the upstream's 200", resp.StatusCode, body)
				case !tt.early && (resp.StatusCode != 400 || !strings.Contains(body, "malformed request body: "+tt.fault)):
					t.Errorf("answer %d %q, want 400 saying %q", resp.StatusCode, body, tt.fault)
				case !tt.early && !resp.Close:
					t.Errorf("the 400 does not say Connection: close")
				}
				io.WriteString(c, tt.after)
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				if rest, err := io.ReadAll(br); err != nil || len(rest) > 0 {
					t.Errorf("after the answer: %q, %v; want the connection closed", rest, err)
				}
				local := c.LocalAddr().String()
				waitFor(t, func() bool { return malformedNote(rig, local) != "" })
				if n := malformedNote(rig, local); strings.Contains(n, "SECRET") || !strings.Contains(n, "request body: "+tt.fault) {
					t.Errorf("tape note %s: want %q, without the request's bytes", n, tt.fault)
				}
			})
		}
		rig.stop()
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) < len(bothPaths)*len(tests) {
		t.Fatalf("the upstream saw %q: the tests did not run", seen)
	}
	for _, s := range seen {
		if strings.Contains(s, "smuggled") {
			t.Errorf("the upstream got %q, bytes of a malformed body", s)
		}
	}
}

// TestHTTPMalformedBodyRecorded: the exchange of a refused body ends
// with status 400 and the fault, closed by the proxy; it is not counted
// as an upstream error.
func TestHTTPMalformedBodyRecorded(t *testing.T) {
	up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	rig := startProxy(t, up.URL, withNetHTTPOnly())
	c := dialRig(t, rig)
	rawExchange(t, c, bufio.NewReader(c), "POST /mcp HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n", "POST")
	recs := waitEnded(t, rig, 1)
	end, ok := endEventOf(t, recs, 1)
	if !ok || end.Status != 400 || end.ClosedBy != ClosedByProxy || !strings.Contains(end.Error, "malformed request body") {
		t.Errorf("end event %+v, want status 400 closed by the proxy for a malformed body", end)
	}
	if n := rig.proxy.Stats().UpstreamErrors; n != 0 {
		t.Errorf("%d upstream errors counted for the client's malformed body", n)
	}
}

// malformedNote returns the tape's "error" event naming the client at
// local, or "".
func malformedNote(rig *proxyRig, local string) string {
	for _, r := range rig.tape.records() {
		if r.Type == tape.TypeEvent && r.Event == tape.EventError && strings.Contains(string(r.Data), local) {
			return string(r.Data)
		}
	}
	return ""
}
