package capture

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/analysis"
	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/tape"
)

// oauthCall is one request of an OAuth flow on the MCP server's origin,
// and what the upstream answers.
type oauthCall struct {
	method, path, ctype, body string
	auth                      bool // send the bearer token
	status                    int
	respType, resp            string
	location                  string
}

// oauthFlow is the flow of repro peer-05, with discovery, authorization
// and an unauthorized MCP request added. Every secret holds "sekrit"; the
// MCP messages hold a tool argument named "token" that must stay as it is.
var oauthFlow = []oauthCall{
	{method: "GET", path: "/.well-known/oauth-authorization-server", status: 200, respType: "application/json",
		resp: `{"issuer":"http://h","authorization_endpoint":"http://h/authorize","token_endpoint":"http://h/token","registration_endpoint":"http://h/register"}`},
	{method: "POST", path: "/mcp", ctype: "application/json", body: `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`,
		status: 401, respType: "application/json", resp: `{"error":"invalid_token","error_description":"no token"}`},
	{method: "POST", path: "/register", ctype: "application/json", body: `{"redirect_uris":["http://localhost:3000/cb"]}`,
		status: 201, respType: "application/json", resp: `{"client_id":"cid","client_secret":"sekrit-client-secret","redirect_uris":["http://localhost:3000/cb"]}`},
	{method: "GET", path: "/authorize?response_type=code&client_id=cid&code_challenge=ch&state=s", status: 302,
		location: "http://localhost:3000/cb?code=sekrit-auth-code&state=s"},
	{method: "POST", path: "/token", ctype: "application/x-www-form-urlencoded", body: "grant_type=authorization_code&code=sekrit-auth-code&code_verifier=sekrit-pkce-verifier&client_secret=sekrit-client-secret",
		status: 200, respType: "application/json", resp: `{"access_token":"sekrit-token-123","token_type":"Bearer","expires_in":3600,"refresh_token":"sekrit-refresh","id_token":"sekrit-id"}`},
	{method: "POST", path: "/mcp", ctype: "application/json", auth: true,
		body:   `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"login","arguments":{"token":"mcp-arg-value","password":"mcp-pw"}}}`,
		status: 200, respType: "application/json", resp: `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"access_token=mcp-result"}]}}`},
}

// TestHTTPOAuthBodiesRedacted: OAuth endpoints on the proxied origin are
// recorded as HTTP exchanges, their bodies in the "end" event with every
// credential redacted, the redirect's code too; the client and upstream
// get every byte unchanged; MCP messages are recorded verbatim; inspect
// finds no JSON-RPC violation in the tape (repro peer-05).
func TestHTTPOAuthBodiesRedacted(t *testing.T) {
	tests := []struct {
		name     string
		endpoint string // path of the upstream URL
		opts     []HTTPOption
		redacted bool
	}{
		{name: "endpoint named", endpoint: "/mcp", redacted: true},
		{name: "no endpoint in the upstream URL", endpoint: "", redacted: true},
		{name: "no-redact", endpoint: "/mcp", opts: []HTTPOption{WithoutRedaction()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			upGot := make(chan string, 1)
			up := upstream(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				upGot <- string(body)
				for _, c := range oauthFlow {
					p, _, _ := strings.Cut(c.path, "?")
					if p != r.URL.Path || c.method != r.Method || c.auth != (r.Header.Get("Authorization") != "") {
						continue
					}
					if c.location != "" {
						w.Header().Set("Location", c.location)
					}
					if c.respType != "" {
						w.Header().Set("Content-Type", c.respType)
					}
					w.WriteHeader(c.status)
					io.WriteString(w, c.resp)
					return
				}
				http.NotFound(w, r)
			}))
			rig := startProxy(t, up.URL+tt.endpoint, tt.opts...)
			c := freshClient(t)
			c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
			for _, call := range oauthFlow {
				req, _ := http.NewRequest(call.method, rig.url+call.path, strings.NewReader(call.body))
				if call.ctype != "" {
					req.Header.Set("Content-Type", call.ctype)
				}
				if call.auth {
					req.Header.Set("Authorization", "Bearer sekrit-token-123")
				}
				resp := mustDo(t, c, req)
				if got := peertest.ReadAnswer(t, resp); got != call.resp || resp.StatusCode != call.status || resp.Header.Get("Location") != call.location {
					t.Errorf("%s %s: client got %d %q (Location %q), want %d %q", call.method, call.path, resp.StatusCode, got, resp.Header.Get("Location"), call.status, call.resp)
				}
				if got := <-upGot; got != call.body {
					t.Errorf("%s %s: upstream got %q, want %q", call.method, call.path, got, call.body)
				}
			}
			recs := waitEnded(t, rig, len(oauthFlow))
			var all bytes.Buffer
			for _, r := range recs {
				all.Write(r.Frame)
				all.Write(r.Data)
			}
			if n := strings.Count(all.String(), "sekrit"); tt.redacted && n != 0 {
				t.Errorf("%d secrets in the tape:\n%s", n, all.String())
			} else if !tt.redacted && n == 0 {
				t.Errorf("--no-redact: the tape holds no body")
			}
			if tt.redacted && !strings.Contains(all.String(), `\"client_secret\":\"<redacted:16-31>\"`) {
				t.Errorf("no redaction marker for client_secret:\n%s", all.String())
			}
			// The MCP messages, verbatim: the refused initialize (its 401
			// body is no message), the tool call and its result.
			var frames []string
			for _, m := range msgs(recs, "") {
				frames = append(frames, string(m.Frame))
			}
			last := oauthFlow[len(oauthFlow)-1]
			if want := []string{oauthFlow[1].body, last.body, last.resp}; !slices.Equal(frames, want) {
				t.Errorf("messages %q, want %q", frames, want)
			}
			for _, e := range httpEvents(t, recs, "end") {
				if e.Path != "/mcp" && e.Messages != 0 {
					t.Errorf("%s %s: %d messages recorded", e.Method, e.Path, e.Messages)
				}
			}
			rep := inspectRecords(t, recs)
			if len(rep.Violations) != 0 || rep.ProxyErrorsN != 0 {
				t.Errorf("inspect: violations %+v, proxy errors %d", rep.Violations, rep.ProxyErrorsN)
			}
		})
	}
}

// inspectRecords writes recs to a tape and inspects it.
func inspectRecords(t *testing.T, recs []tape.Record) *analysis.Report {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.jsonl.zst")
	w, err := tape.Create(path, tape.Header{Transport: "http"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rep, err := analysis.Inspect(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}
