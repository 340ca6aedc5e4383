package analysis

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
)

// post sends one JSON-RPC body to url with client and the given extra
// headers and returns the HTTP status; host, when set, replaces the Host.
func post(t *testing.T, ctx context.Context, client *http.Client, url, body, host string, hdr ...string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	if host != "" {
		req.Host = host
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", body, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// newConnClient returns a client that keeps its own connections (a new
// one per client, reused between its requests).
func newConnClient() *http.Client {
	return &http.Client{Transport: &http.Transport{}, Timeout: 20 * time.Second}
}

const alarmInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"%s","capabilities":{},"clientInfo":{"name":"r","version":"1"}}}`

// TestRealPeersNoFalseAlarms records traffic that is correct but unusual
// between a client and real servers through the recording proxy, and
// checks that inspect reports it as it is, with no error-level problem
// (repros peer-02, peer-03, peer-04).
func TestRealPeersNoFalseAlarms(t *testing.T) {
	if testing.Short() {
		t.Skip("real peers: not in -short mode")
	}
	tests := []struct {
		name   string
		server func(t testing.TB, ctx context.Context) *peertest.Process
		script func(t *testing.T, ctx context.Context, url string)
		check  func(t *testing.T, rep *Report)
	}{
		{
			// peer-02: the Go SDK's DNS-rebinding protection refuses an
			// initialize with a foreign Host (403) after another session
			// got an Mcp-Session-Id.
			name: "refused initialize (go-sdk, sessions)",
			server: func(t testing.TB, ctx context.Context) *peertest.Process {
				return peertest.GoEverythingHTTP(t, ctx, false)
			},
			script: func(t *testing.T, ctx context.Context, url string) {
				init := strings.Replace(alarmInit, "%s", "2025-11-25", 1)
				if st := post(t, ctx, newConnClient(), url, init, ""); st != 200 {
					t.Fatalf("initialize: %d", st)
				}
				if st := post(t, ctx, newConnClient(), url, init, "evil.example.com"); st != 403 {
					t.Fatalf("initialize with a foreign Host: %d, want 403", st)
				}
			},
			check: func(t *testing.T, rep *Report) {
				if rep.Refused.Count != 1 || len(rep.Refused.Requests) != 1 || rep.Refused.Requests[0].Status != 403 || rep.Refused.Requests[0].Method != "initialize" {
					t.Errorf("refused %+v, want the initialize with 403", rep.Refused)
				}
			},
		},
		{
			// peer-03: a stateless server assigns no session id; the
			// client initializes on one connection, lists tools on another.
			name: "sessionless, two connections (go-sdk, stateless)",
			server: func(t testing.TB, ctx context.Context) *peertest.Process {
				return peertest.GoEverythingHTTP(t, ctx, true)
			},
			script: func(t *testing.T, ctx context.Context, url string) {
				v := []string{"Mcp-Protocol-Version", "2025-06-18"}
				first := newConnClient()
				if st := post(t, ctx, first, url, strings.Replace(alarmInit, "%s", "2025-06-18", 1), "", v...); st != 200 {
					t.Fatalf("initialize: %d", st)
				}
				if st := post(t, ctx, first, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, "", v...); st != 202 {
					t.Fatalf("initialized: %d", st)
				}
				if st := post(t, ctx, newConnClient(), url, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, "", v...); st != 200 {
					t.Fatalf("tools/list: %d", st)
				}
			},
			check: func(t *testing.T, rep *Report) {
				if len(rep.Sessions) != 2 {
					t.Errorf("%d sessions, want one per connection", len(rep.Sessions))
				}
				if l := latencyOf(t, rep, "c2s", "tools/list"); l.Count != 1 {
					t.Errorf("tools/list %+v", l)
				}
			},
		},
		{
			// peer-04: server-everything refuses server/discover before
			// initialize with HTTP 400 and an error whose id is null.
			name:   "HTTP 400 with a null-id error (server-everything)",
			server: peertest.EverythingHTTP,
			script: func(t *testing.T, ctx context.Context, url string) {
				if st := post(t, ctx, newConnClient(), url, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`, "",
					"Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "server/discover"); st != 400 {
					t.Fatalf("server/discover: %d, want 400", st)
				}
			},
			check: func(t *testing.T, rep *Report) {
				if l := latencyOf(t, rep, "c2s", "server/discover"); l.Count != 1 || l.Errors != 1 {
					t.Errorf("server/discover %+v, want one answered with an error", l)
				}
				if len(rep.Errors) != 1 || rep.Errors[0].Method != "server/discover" {
					t.Errorf("errors %+v", rep.Errors)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			srv := tt.server(t, ctx)
			out := filepath.Join(t.TempDir(), "t.jsonl.zst")
			httpProxy(t, ctx, srv.URL, out, func(url string) { tt.script(t, ctx, url) })
			rep, err := Inspect(ctx, out)
			if err != nil {
				t.Fatal(err)
			}
			checkNoErrors(t, rep)
			tt.check(t, rep)
		})
	}
}

// checkNoErrors fails the test for every error-level problem of rep.
func checkNoErrors(t *testing.T, rep *Report) {
	t.Helper()
	for _, p := range rep.Problems {
		if p.Severity == SeverityError {
			t.Errorf("false alarm: %s %s %v", p.What, p.Summary, p.Details)
		}
	}
}

// TestInspectOAuthSilent: OAuth discovery, registration and token
// exchanges recorded through the proxy (plain HTTP exchanges) and the 401
// that starts the flow raise no warning or error.
func TestInspectOAuthSilent(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-protected-resource", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"resource":"http://h/mcp","authorization_servers":["http://h"]}`)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"access_token":"sekrit","token_type":"Bearer"}`)
	})
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://h/.well-known/oauth-protected-resource"`)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = io.WriteString(w, `{"error":"invalid_token"}`)
	})
	up := httptest.NewServer(mux)
	defer up.Close()
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "t.jsonl.zst")
	httpProxy(t, ctx, up.URL+"/mcp", out, func(url string) {
		c := newConnClient()
		base := strings.TrimSuffix(url, "/mcp")
		if st := post(t, ctx, c, url, strings.Replace(alarmInit, "%s", "2025-11-25", 1), ""); st != 401 {
			t.Fatalf("initialize: %d", st)
		}
		resp, err := c.Get(base + "/.well-known/oauth-protected-resource")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		resp, err = c.Post(base+"/token", "application/x-www-form-urlencoded", strings.NewReader("grant_type=authorization_code&code=x"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	})
	rep, err := Inspect(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Problems {
		if p.Severity > SeverityInfo {
			t.Errorf("%s: %s %s %v", p.Severity, p.What, p.Summary, p.Details)
		}
	}
	if rep.Refused.Unauthorized != 1 {
		t.Errorf("refused %+v, want the 401", rep.Refused)
	}
	checkExport(t, ctx, out, rep) // the refused request is a row
}
