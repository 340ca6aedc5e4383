package capture

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/tape"
)

// seen is what an upstream received.
type seen struct {
	Method, URI, Host string
	Header            http.Header
	Body              string
}

// mirror is an upstream that reports what it received and answers with
// the status, headers and body the request asks for (X-Want-Status,
// X-Want-Header "Name: value" lines, X-Want-Body).
func mirror(got chan<- seen) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- seen{r.Method, r.RequestURI, r.Host, r.Header.Clone(), string(body)}
		for _, h := range r.Header.Values("X-Want-Header") {
			name, value, _ := strings.Cut(h, ": ")
			w.Header().Add(name, value)
		}
		status := http.StatusOK
		fmt.Sscan(r.Header.Get("X-Want-Status"), &status)
		w.WriteHeader(status)
		io.WriteString(w, r.Header.Get("X-Want-Body"))
	})
}

// TestHTTPPassThrough sends the same requests to an upstream directly and
// through the proxy: the upstream must see the same requests, the client
// the same responses.
func TestHTTPPassThrough(t *testing.T) {
	for _, path := range []struct {
		name string
		opts []HTTPOption
	}{{"lean", nil}, {"net-http", []HTTPOption{withNetHTTPOnly()}}} {
		t.Run(path.name, func(t *testing.T) { testPassThrough(t, path.opts...) })
	}
}

func testPassThrough(t *testing.T, opts ...HTTPOption) {
	got := make(chan seen, 1)
	up := upstream(t, mirror(got))
	rig := startProxy(t, up.URL, opts...)
	tests := []struct {
		name, method, uri, body string
		header                  http.Header
	}{
		{"post json", "POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"ping"}`,
			http.Header{"Content-Type": {"application/json"}, "Mcp-Session-Id": {"s1"}, "X-Want-Status": {"202"}}},
		{"get with query", "GET", "/mcp?a=1&b=%20x&a=2", "",
			http.Header{"Accept": {"text/event-stream"}, "Last-Event-Id": {"ev-9"}, "X-Want-Body": {"hello"}}},
		{"unparsable query kept", "GET", "/p?a=1;b=2&c", "", http.Header{}},
		{"delete", "DELETE", "/mcp", "", http.Header{"Mcp-Session-Id": {"s1"}, "X-Want-Status": {"204"}}},
		{"put", "PUT", "/other/path", "raw bytes \x00\xff", http.Header{"Content-Type": {"application/octet-stream"}}},
		{"origin, forwarding and many values", "POST", "/mcp", "{}", http.Header{
			"Origin": {"http://evil.example"}, "X-Forwarded-For": {"10.0.0.1"}, "Forwarded": {"for=10.0.0.1"},
			"X-Multi": {"a", "b"}, "User-Agent": {"test-agent/1"},
			"X-Want-Header": {"Set-Cookie: a=1", "Set-Cookie: b=2", "X-Resp: r"}, "X-Want-Status": {"418"}, "X-Want-Body": {"teapot"}}},
		{"hop-by-hop removed", "POST", "/mcp", "{}", http.Header{"Connection": {"X-Hop"}, "X-Hop": {"1"}, "Keep-Alive": {"timeout=5"}}},
		{"not found", "GET", "/nope", "", http.Header{"X-Want-Status": {"404"}, "X-Want-Body": {"no such page"}}},
		{"te trailers kept", "POST", "/mcp", "{}", http.Header{"Te": {"trailers"}, "X-Want-Header": {"Connection: X-Resp-Hop", "X-Resp-Hop: 1", "X-Kept: k"}}},
		{"head", "HEAD", "/mcp", "", http.Header{"X-Want-Header": {"Content-Length: 42", "Content-Type: application/json"}}},
		{"empty post", "POST", "/mcp", "", http.Header{"X-Want-Status": {"202"}}},
	}
	c := freshClient(t)
	do := func(base string, method, uri, body string, h http.Header) (seen, int, http.Header, string) {
		req, err := http.NewRequest(method, base+uri, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body == "" {
			req.Body, req.ContentLength = nil, 0
		}
		req.Header = h.Clone()
		req.Host = strings.TrimPrefix(up.URL, "http://") // the same Host both ways
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b := peertest.ReadAnswer(t, resp)
		var s seen
		select {
		case s = <-got:
		case <-time.After(5 * time.Second):
			t.Fatal("the upstream got no request")
		}
		resp.Header.Del("Date")
		return s, resp.StatusCode, resp.Header, b
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ds, dstatus, dh, db := do(up.URL, tt.method, tt.uri, tt.body, tt.header)
			ps, pstatus, ph, pb := do(rig.url, tt.method, tt.uri, tt.body, tt.header)
			for _, h := range []string{"Connection", "X-Hop", "Keep-Alive"} {
				ds.Header.Del(h) // hop-by-hop: only the direct request keeps them
			}
			if _, ok := ph["X-Resp-Hop"]; ok {
				t.Errorf("a response header named in Connection reached the client")
			}
			dh.Del("X-Resp-Hop") // and the direct response
			dh.Del("Connection")
			if fmt.Sprint(ds) != fmt.Sprint(ps) {
				t.Errorf("upstream saw\n direct: %+v\nproxied: %+v", ds, ps)
			}
			if dstatus != pstatus || db != pb || fmt.Sprint(dh) != fmt.Sprint(ph) {
				t.Errorf("client got\n direct: %d %v %q\nproxied: %d %v %q", dstatus, dh, db, pstatus, ph, pb)
			}
			if _, ok := ps.Header["X-Hop"]; ok {
				t.Errorf("a header named in Connection reached the upstream")
			}
		})
	}
}

// TestHTTPHost checks which Host values are replaced by the upstream's.
func TestHTTPHost(t *testing.T) {
	got := make(chan seen, 1)
	up := upstream(t, mirror(got))
	upHost := strings.TrimPrefix(up.URL, "http://")
	rig := startProxy(t, up.URL)
	preserving := startProxy(t, up.URL, WithPreserveHost(true))
	named := startProxy(t, up.URL, WithListenAddr("mcp.local:8931"))
	_, port, _ := net.SplitHostPort(rig.addr)
	tests := []struct {
		name string
		rig  *proxyRig
		host string // "" means the proxy's own address
		want string // "" means the upstream's host
	}{
		{"proxy address", rig, "", ""},
		{"localhost and the proxy's port", rig, "localhost:" + port, ""},
		{"another name", rig, "evil.example:" + port, "evil.example:" + port},
		{"another port", rig, "127.0.0.1:1", "127.0.0.1:1"},
		{"no port", rig, "127.0.0.1", "127.0.0.1"},
		{"preserved", preserving, "", "proxy"},
		{"listen name", named, "mcp.local:8931", ""},
	}
	c := freshClient(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest("GET", tt.rig.url+"/mcp", nil)
			req.Host = tt.host
			if tt.host == "" {
				req.Host = tt.rig.addr
			}
			peertest.ReadAnswer(t, mustDo(t, c, req))
			s := <-got
			want := tt.want
			switch want {
			case "":
				want = upHost
			case "proxy":
				want = tt.rig.addr
			}
			if s.Host != want {
				t.Errorf("upstream got Host %q, want %q", s.Host, want)
			}
		})
	}
}

func mustDo(t testing.TB, c *http.Client, req *http.Request) *http.Response {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestHTTPStreamsEventByEvent: the upstream sends the next event only once
// the client has received the previous one, so any buffering in the proxy
// deadlocks the test. Keep-alives, priming events, retry and ids must reach
// the client byte for byte.
func TestHTTPStreamsEventByEvent(t *testing.T) {
	sent := []string{
		"id: p-0\nretry: 250\ndata: \n\n",
		": keepalive\n\n",
		"event: message\nid: e-1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n",
		"event: message\r\nid: e-2\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\r\ndata: \"result\":{}}\r\n\r\n",
	}
	ack := make(chan struct{})
	var lastEventID string
	up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lastEventID = r.Header.Get("Last-Event-ID")
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, e := range sent {
			io.WriteString(w, e)
			w.(http.Flusher).Flush()
			select {
			case <-ack:
			case <-time.After(5 * time.Second):
				return // the test fails below: the client never saw the event
			}
		}
	}))
	rig := startProxy(t, up.URL)
	req, _ := http.NewRequest("GET", rig.url+"/mcp", nil)
	req.Header.Set("Last-Event-ID", "e-0")
	req.Header.Set("Mcp-Session-Id", "s-1")
	resp := mustDo(t, freshClient(t), req)
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	for i, want := range sent {
		got := make([]byte, len(want))
		done := make(chan error, 1)
		go func() { _, err := io.ReadFull(br, got); done <- err }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("event %d: %v", i, err)
			}
		case <-time.After(3 * time.Second):
			t.Fatalf("event %d did not reach the client: the proxy holds it back", i)
		}
		if string(got) != want {
			t.Fatalf("event %d: got %q, want %q", i, got, want)
		}
		ack <- struct{}{}
	}
	if rest, _ := io.ReadAll(br); len(rest) != 0 {
		t.Fatalf("extra bytes after the events: %q", rest)
	}
	if lastEventID != "e-0" {
		t.Errorf("Last-Event-ID reached the upstream as %q", lastEventID)
	}
	recs := waitEnded(t, rig, 1)
	m := msgs(recs, tape.ServerToClient)
	if len(m) != 2 || m[0].EventID != "e-1" || m[1].EventID != "e-2" || m[0].Stream != StreamGET || m[0].Session != "s-1" {
		t.Fatalf("recorded messages: %+v", m)
	}
	if string(m[1].Frame) != "{\"jsonrpc\":\"2.0\",\"id\":1,\n\"result\":{}}" {
		t.Errorf("multi-line data recorded as %q", m[1].Frame)
	}
	var kinds []string
	for _, r := range events(recs, EventSSE) {
		var n SSENote
		json.Unmarshal(r.Data, &n)
		kinds = append(kinds, n.Kind)
	}
	if strings.Join(kinds, ",") != "priming,comment" {
		t.Errorf("sse notes %v, want priming,comment", kinds)
	}
	end, _ := endEventOf(t, recs, 1)
	if end.Events != 4 || end.Comments != 1 || end.LastEventID != "e-2" || end.ClosedBy != ClosedByServer || end.Messages != 2 {
		t.Errorf("end event %+v", end)
	}
}

// TestHTTPUpstreamErrors: an unreachable upstream and one that fails
// before answering give 502 with a clear body and an error record; one
// that breaks mid-stream ends the client's stream; the proxy keeps
// serving.
func TestHTTPUpstreamErrors(t *testing.T) {
	t.Run("unreachable", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		dead := "http://" + ln.Addr().String()
		ln.Close()
		rig := startProxy(t, dead)
		c := freshClient(t)
		for i := range 2 { // the proxy keeps answering
			resp := peertest.PostJSON(t, c, rig.url+"/mcp", "", "", `{"jsonrpc":"2.0","id":1,"method":"initialize"}`)
			body := peertest.ReadAnswer(t, resp)
			if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "mcptape: upstream "+dead) || !strings.Contains(body, "refused") {
				t.Fatalf("request %d: %d %q", i, resp.StatusCode, body)
			}
		}
		recs := waitEnded(t, rig, 2)
		if n := len(events(recs, tape.EventError)); n != 2 {
			t.Errorf("%d error events, want 2", n)
		}
		if m := msgs(recs, tape.ClientToServer); len(m) != 2 {
			t.Errorf("the client's messages were not recorded: %d", len(m))
		}
		end, _ := endEventOf(t, recs, 1)
		if end.Status != http.StatusBadGateway || end.ClosedBy != ClosedByProxy || !strings.Contains(end.Error, "refused") || end.RequestHeaders == nil {
			t.Errorf("end event %+v", end)
		}
		if st := rig.proxy.Stats(); st.UpstreamErrors != 2 {
			t.Errorf("stats %+v", st)
		}
	})
	t.Run("mid-stream", func(t *testing.T) {
		up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/ok" {
				io.WriteString(w, "fine")
				return
			}
			if r.URL.Path == "/early" {
				c, _, _ := http.NewResponseController(w).Hijack()
				c.Close()
				return
			}
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"m\"}\n\ndata: {\"cut")
			w.(http.Flusher).Flush()
			c, buf, _ := http.NewResponseController(w).Hijack()
			buf.Flush()
			c.Close()
		}))
		rig := startProxy(t, up.URL)
		c := freshClient(t)
		resp := peertest.PostJSON(t, c, rig.url+"/stream", "s", "", `{}`)
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil || !strings.HasPrefix(string(b), "data: {\"jsonrpc\"") {
			t.Fatalf("client read %q, %v: want the first event then an error", b, err)
		}
		resp = peertest.PostJSON(t, c, rig.url+"/early", "s", "", `{}`)
		if body := peertest.ReadAnswer(t, resp); resp.StatusCode != http.StatusBadGateway || !strings.HasPrefix(body, "mcptape: upstream "+up.URL+": ") {
			t.Errorf("early failure: %d %q", resp.StatusCode, body)
		}
		if body := peertest.ReadAnswer(t, peertest.PostJSON(t, c, rig.url+"/ok", "s", "", `{}`)); body != "fine" {
			t.Errorf("after the failures: %q", body)
		}
		recs := waitEnded(t, rig, 3)
		end, _ := endEventOf(t, recs, 1)
		if end.ClosedBy != ClosedByServer || end.Error == "" || end.Messages != 1 {
			t.Errorf("mid-stream end event %+v", end)
		}
		var errs []string
		for _, r := range events(recs, tape.EventError) {
			errs = append(errs, string(r.Data))
		}
		joined := strings.Join(errs, "\n")
		if !strings.Contains(joined, "broke off") || !strings.Contains(joined, "inside an SSE event") || !strings.Contains(joined, "upstream "+up.URL) {
			t.Errorf("error events:\n%s", joined)
		}
	})
}

// TestHTTPClientCancel: a client that closes its response stream cancels
// the upstream request at once; nothing leaks.
func TestHTTPClientCancel(t *testing.T) {
	upstreamDone := make(chan time.Time, 1)
	up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
			upstreamDone <- time.Now()
		case <-time.After(10 * time.Second):
		}
	}))
	rig := startProxy(t, up.URL)
	c := freshClient(t)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", rig.url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call"}`))
	req.Header.Set("Mcp-Method", "tools/call")
	resp := mustDo(t, c, req)
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "data:") {
		t.Fatalf("first event: %q %v", line, err)
	}
	cancelled := time.Now()
	cancel()
	resp.Body.Close()
	expectUpstreamCancel(t, upstreamDone, cancelled)
	recs := waitEnded(t, rig, 1)
	end, _ := endEventOf(t, recs, 1)
	if end.ClosedBy != ClosedByClient {
		t.Errorf("end event %+v: want closed by the client", end)
	}
	if m := msgs(recs, ""); len(m) != 2 || m[0].Session != "conn-1" {
		t.Errorf("messages %+v", m)
	}
	rig.stop()
	up.Close()
	checkNoProxyGoroutines(t)
}

// TestHTTPShutdown: closing the proxy cuts open streams (recorded as closed
// by the proxy) and closes the sessions still open.
func TestHTTPShutdown(t *testing.T) {
	up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	rig := startProxy(t, up.URL)
	req, _ := http.NewRequest("GET", rig.url+"/mcp", nil)
	req.Header.Set("Mcp-Session-Id", "long")
	resp := mustDo(t, freshClient(t), req)
	defer resp.Body.Close()
	start := time.Now()
	rig.stop()
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("shutdown took %v", d)
	}
	io.ReadAll(resp.Body)
	recs := rig.tape.records()
	end, ok := endEventOf(t, recs, 1)
	if !ok || end.ClosedBy != ClosedByProxy {
		t.Errorf("end event %+v", end)
	}
	closes := events(recs, tape.EventClose)
	if len(closes) != 1 || closes[0].Session != "long" || !strings.Contains(string(closes[0].Data), `"shutdown"`) {
		t.Errorf("close events %+v", closes)
	}
	resp2, err := freshClient(t).Get(rig.url + "/mcp")
	if err == nil {
		resp2.Body.Close()
		t.Errorf("the proxy still answers after shutdown")
	}
}

// TestHTTPBodyLimit: bodies longer than the limit are forwarded whole and
// recorded cut, with an error record.
func TestHTTPBodyLimit(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":1,"method":"x","params":{"blob":"` + strings.Repeat("a", 10000) + `"}}`
	got := make(chan seen, 1)
	up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- seen{Body: string(body)}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	rig := startProxy(t, up.URL, WithMaxBody(1000))
	resp := peertest.PostJSON(t, freshClient(t), rig.url+"/mcp", "s", "", big)
	if b := peertest.ReadAnswer(t, resp); b != big {
		t.Fatalf("client got %d bytes, want %d", len(b), len(big))
	}
	if s := <-got; s.Body != big {
		t.Fatalf("upstream got %d bytes, want %d", len(s.Body), len(big))
	}
	recs := waitEnded(t, rig, 1)
	for _, m := range msgs(recs, "") {
		if len(m.Frame) != 1000 || !strings.HasPrefix(big, string(m.Frame)) {
			t.Errorf("%s message recorded with %d bytes", m.Dir, len(m.Frame))
		}
	}
	var errs []string
	for _, r := range events(recs, tape.EventError) {
		errs = append(errs, string(r.Data))
	}
	if len(errs) != 2 || !strings.Contains(errs[0], "recorded cut") || !strings.Contains(errs[1], "recorded cut") {
		t.Errorf("error events %q", errs)
	}
}
