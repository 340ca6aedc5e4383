package capture

// Transfer details of the HTTP proxy: TLS upstreams, compressed bodies,
// streamed request bodies, many sessions at once, construction errors.

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/tape"
)

// TestHTTPTLS: an https upstream with a self-signed certificate is refused
// unless WithInsecureTLS.
func TestHTTPTLS(t *testing.T) {
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	up.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	up.StartTLS()
	defer up.Close()
	c := freshClient(t)
	strict := startProxy(t, up.URL)
	resp := peertest.PostJSON(t, c, strict.url+"/mcp", "", "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if body := peertest.ReadAnswer(t, resp); resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "certificate") {
		t.Errorf("verified TLS: %d %q", resp.StatusCode, body)
	}
	loose := startProxy(t, up.URL, WithInsecureTLS(true))
	resp = peertest.PostJSON(t, c, loose.url+"/mcp", "", "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if body := peertest.ReadAnswer(t, resp); resp.StatusCode != http.StatusOK || body != `{"jsonrpc":"2.0","id":1,"result":{}}` {
		t.Errorf("insecure TLS: %d %q", resp.StatusCode, body)
	}
	recs := waitEnded(t, loose, 1)
	if m := msgs(recs, ""); len(m) != 2 {
		t.Errorf("%d messages recorded over TLS", len(m))
	}
}

func TestNewHTTPProxyErrors(t *testing.T) {
	tests := []struct {
		name, upstream string
		opts           []HTTPOption
		want           string
	}{
		{"relative", "/mcp", nil, "want an http"},
		{"ftp", "ftp://h/mcp", nil, "want an http"},
		{"no host", "http:///mcp", nil, "no host"},
		{"bad url", "http://h\x7f/", nil, "invalid"},
		{"password redacted", "ftp://u:hunter2@h/", nil, "redacted"},
		{"max body", "http://h/", []HTTPOption{WithMaxBody(0)}, "max body 0"},
		{"bad header name", "http://h/", []HTTPOption{WithRedactHeaders("X Bad")}, `"X Bad"`},
		{"grace", "http://h/", []HTTPOption{WithShutdownGrace(-1)}, "grace"},
		{"listen", "http://h/", []HTTPOption{WithListenAddr("nope")}, "nope"},
		{"insecure with transport", "http://h/", []HTTPOption{WithInsecureTLS(true), WithTransport(http.DefaultTransport)}, "WithInsecureTLS"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewHTTPProxy(tt.upstream, &memTape{}, tt.opts...)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "hunter2") {
				t.Errorf("err %v, want it to contain %q", err, tt.want)
			}
		})
	}
	if _, err := NewHTTPProxy("http://h/", nil); err == nil {
		t.Error("nil tape accepted")
	}
}

// TestHTTPGzip: compressed bodies are forwarded as they are and recorded
// decoded.
func TestHTTPGzip(t *testing.T) {
	up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		_ = body
		w.Header().Set("Content-Encoding", "gzip")
		if r.URL.Path == "/sse" {
			w.Header().Set("Content-Type", "text/event-stream")
			zw := gzip.NewWriter(w)
			io.WriteString(zw, "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n\n")
			zw.Flush()
			w.(http.Flusher).Flush()
			io.WriteString(zw, "id: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
			zw.Close()
			return
		}
		w.Header().Set("Content-Type", "application/json")
		zw := gzip.NewWriter(w)
		io.WriteString(zw, `{"jsonrpc":"2.0","id":1,"result":{"zipped":true}}`)
		zw.Close()
	}))
	rig := startProxy(t, up.URL)
	c := freshClient(t)
	for _, path := range []string{"/json", "/sse"} {
		req, _ := http.NewRequest("POST", rig.url+path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"m"}`))
		req.Header.Set("Accept-Encoding", "gzip")
		req.Header.Set("Mcp-Session-Id", "z")
		resp := mustDo(t, c, req)
		raw := peertest.ReadAnswer(t, resp)
		if resp.Header.Get("Content-Encoding") != "gzip" || !strings.HasPrefix(raw, "\x1f\x8b") {
			t.Errorf("%s: the client did not get the compressed bytes", path)
		}
	}
	recs := waitEnded(t, rig, 2)
	var got []string
	for _, m := range msgs(recs, tape.ServerToClient) {
		got = append(got, m.EventID+" "+string(m.Frame))
	}
	want := []string{` {"jsonrpc":"2.0","id":1,"result":{"zipped":true}}`, `1 {"jsonrpc":"2.0","method":"a"}`, `2 {"jsonrpc":"2.0","id":1,"result":{}}`}
	if !slices.Equal(got, want) {
		t.Errorf("recorded %q, want %q", got, want)
	}
}

// TestHTTPConcurrentSessions: many sessions at once are told apart.
func TestHTTPConcurrentSessions(t *testing.T) {
	up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sid := r.Header.Get("Mcp-Session-Id")
		if sid == "" {
			sid = "S" + rand.Text()[:8]
			w.Header().Set("Mcp-Session-Id", sid)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"session\":%q,\"echo\":%s}}\n\n", sid, body)
	}))
	rig := startProxy(t, up.URL)
	const n = 50
	var wg sync.WaitGroup
	sessions := make([]string, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := freshClient(t)
			resp := peertest.PostJSON(t, c, rig.url+"/mcp", "", "", fmt.Sprintf(`{"i":%d}`, i))
			sid := resp.Header.Get("Mcp-Session-Id")
			peertest.ReadAnswer(t, resp)
			sessions[i] = sid
			for j := range 3 {
				peertest.ReadAnswer(t, peertest.PostJSON(t, c, rig.url+"/mcp", sid, "", fmt.Sprintf(`{"i":%d,"j":%d}`, i, j)))
			}
		}()
	}
	wg.Wait()
	recs := waitEnded(t, rig, 4*n)
	bySession := map[string][]tape.Record{}
	for _, m := range msgs(recs, "") {
		bySession[m.Session] = append(bySession[m.Session], m)
	}
	if len(bySession) != n {
		t.Fatalf("%d sessions recorded, want %d", len(bySession), n)
	}
	for i, sid := range sessions {
		ms := bySession[sid]
		if len(ms) != 8 {
			t.Fatalf("session %d: %d messages", i, len(ms))
		}
		for _, m := range ms {
			if !bytes.Contains(m.Frame, fmt.Appendf(nil, `{"i":%d`, i)) {
				t.Errorf("session %s holds a message of another: %s", sid, m.Frame)
			}
		}
	}
	if opens := events(recs, tape.EventOpen); len(opens) != n {
		t.Errorf("%d open events, want %d", len(opens), n)
	}
}

// urlHost returns the host:port of a URL.
func urlHost(s string) string {
	u, _ := url.Parse(s)
	return u.Host
}

// TestHTTPFullDuplex: an upstream that starts its answer before the request
// body has ended (a streamed request body) still gets the whole body: the
// proxy must not let net/http close the body when the response starts.
func TestHTTPFullDuplex(t *testing.T) {
	up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.NewResponseController(w).EnableFullDuplex() // this upstream answers while it reads
		br := bufio.NewReader(r.Body)
		first, _ := br.ReadString('\n')
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: {\"got\":%q}\n\n", first)
		w.(http.Flusher).Flush()
		rest, err := io.ReadAll(br)
		fmt.Fprintf(w, "data: {\"got\":%q,\"err\":%q}\n\n", rest, fmt.Sprint(err))
	}))
	rig := startProxy(t, up.URL)
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("POST", rig.url+"/mcp", pr) // chunked: no length known
	resp, errc := (*http.Response)(nil), make(chan error, 1)
	go func() {
		var err error
		resp, err = freshClient(t).Do(req)
		errc <- err
	}()
	io.WriteString(pw, "part one\n")
	select {
	case err := <-errc:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		pw.CloseWithError(io.ErrUnexpectedEOF)
		t.Fatal("no answer: the proxy stalled the streamed request body")
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	line, _ := br.ReadString('\n')
	if !strings.Contains(line, `part one`) {
		t.Fatalf("first event %q", line)
	}
	io.WriteString(pw, "part two")
	pw.Close()
	rest, _ := io.ReadAll(br)
	if !strings.Contains(string(rest), `{"got":"part two","err":"\u003cnil\u003e"}`) && !strings.Contains(string(rest), `{"got":"part two","err":"<nil>"}`) {
		t.Fatalf("the upstream did not get the rest of the body: %q", rest)
	}
}

// TestHTTPClock: every record of the proxy is stamped by its clock.
func TestHTTPClock(t *testing.T) {
	fixed := time.Unix(1700000000, 42)
	up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	rig := startProxy(t, up.URL, WithHTTPClock(func() time.Time { return fixed }))
	peertest.ReadAnswer(t, peertest.PostJSON(t, freshClient(t), rig.url+"/mcp", "s", "", `{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	rig.stop()
	recs := rig.tape.records()
	if len(recs) < 5 {
		t.Fatalf("%d records", len(recs))
	}
	for _, r := range recs {
		if r.Time != fixed.UnixNano() {
			t.Errorf("%s %s stamped %d, want %d", r.Type, r.Event, r.Time, fixed.UnixNano())
		}
	}
}
