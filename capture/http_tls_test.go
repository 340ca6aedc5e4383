package capture

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/tape"
)

// testCert returns httptest's certificate (for 127.0.0.1) and a pool that
// trusts it.
func testCert(t testing.TB) ([]tls.Certificate, *x509.CertPool) {
	t.Helper()
	s := httptest.NewTLSServer(http.NotFoundHandler())
	defer s.Close()
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	return s.TLS.Certificates, pool
}

// TestHTTPSListener: with WithTLS the proxy answers HTTPS on both serving
// paths, offers HTTP/1.1 only (a client asking for h2 gets HTTP/1.1),
// records as over plain HTTP, and rewrites a legacy endpoint to https.
func TestHTTPSListener(t *testing.T) {
	certs, pool := testCert(t)
	up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.Header().Set("Content-Type", "text/event-stream")
			w.(http.Flusher).Flush() // a stream: no Content-Length
			fmt.Fprintf(w, "event: endpoint\ndata: http://%s/messages?sessionId=L1\n\n", r.Host)
			return
		}
		io.ReadAll(r.Body)
		w.Header().Set("Mcp-Session-Id", "S1")
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
	}))
	for _, path := range bothPaths {
		t.Run(path.name, func(t *testing.T) {
			rig := startProxy(t, up.URL+"/mcp", append([]HTTPOption{WithTLS(&tls.Config{Certificates: certs, NextProtos: []string{"h2", "http/1.1"}})}, path.opts...)...)
			tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
			defer tr.CloseIdleConnections()
			c := &http.Client{Transport: tr}
			url := strings.Replace(rig.url, "http://", "https://", 1)
			resp := peertest.PostJSON(t, c, url+"/mcp", "", "", `{"jsonrpc":"2.0","id":1,"method":"initialize"}`)
			body := peertest.ReadAnswer(t, resp)
			if resp.Proto != "HTTP/1.1" || resp.TLS == nil || resp.TLS.NegotiatedProtocol != "http/1.1" || !strings.Contains(body, `"result"`) {
				t.Fatalf("got %s (ALPN %q) %q", resp.Proto, resp.TLS.NegotiatedProtocol, body)
			}
			resp, err := c.Get(url + "/sse")
			if err != nil {
				t.Fatal(err)
			}
			if ev := peertest.ReadAnswer(t, resp); !strings.Contains(ev, "data: https://"+rig.addr+"/messages?sessionId=L1") {
				t.Errorf("legacy endpoint over HTTPS: %q", ev)
			}
			if _, err := http.Get(rig.url + "/mcp"); err == nil {
				t.Error("plain HTTP was answered on the HTTPS listener")
			}
			recs := waitEnded(t, rig, 2)
			if m := msgs(recs, tape.ClientToServer); len(m) != 1 || m[0].Session != "S1" {
				t.Errorf("recorded client messages %+v", m)
			}
		})
	}
	if _, err := NewHTTPProxy(up.URL, &memTape{}, WithTLS(&tls.Config{})); err == nil {
		t.Error("WithTLS without a certificate accepted")
	}
}

// TestHTTP2UpstreamFallback: an upstream that speaks HTTP/2 over TLS
// works through the net/http path (which negotiates h2 with it): a
// chunked request, which the lean path hands over, and every request when
// net/http serves all. The lean path itself talks HTTP/1.1 to it.
func TestHTTP2UpstreamFallback(t *testing.T) {
	var mu sync.Mutex
	var protos []string
	up := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		protos = append(protos, r.Proto)
		mu.Unlock()
		io.ReadAll(r.Body)
		w.Header().Set("Mcp-Session-Id", "H2")
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
	}))
	up.EnableHTTP2 = true
	up.StartTLS()
	defer up.Close()
	for _, tc := range []struct {
		name    string
		opts    []HTTPOption
		chunked bool
		want    string
	}{
		{name: "lean path", want: "HTTP/1.1"},
		{name: "chunked request, handed over", chunked: true, want: "HTTP/2.0"},
		{name: "net/http only", opts: []HTTPOption{withNetHTTPOnly()}, want: "HTTP/2.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			protos = nil
			mu.Unlock()
			rig := startProxy(t, up.URL+"/mcp", append([]HTTPOption{WithInsecureTLS(true)}, tc.opts...)...)
			var body io.Reader = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`)
			if tc.chunked {
				body = io.MultiReader(body) // no length: sent chunked
			}
			req, _ := http.NewRequest(http.MethodPost, rig.url+"/mcp", body)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp := mustDo(t, freshClient(t), req)
			if got := peertest.ReadAnswer(t, resp); resp.StatusCode != 200 || !strings.Contains(got, `"result":{}`) {
				t.Fatalf("client got %d %q", resp.StatusCode, got)
			}
			recs := waitEnded(t, rig, 1)
			if len(msgs(recs, tape.ClientToServer)) != 1 || len(msgs(recs, tape.ServerToClient)) != 1 {
				t.Errorf("recorded %d client and %d server messages, want 1 each", len(msgs(recs, tape.ClientToServer)), len(msgs(recs, tape.ServerToClient)))
			}
			mu.Lock()
			defer mu.Unlock()
			if len(protos) != 1 || protos[0] != tc.want {
				t.Errorf("upstream saw %v, want %s", protos, tc.want)
			}
		})
	}
}
