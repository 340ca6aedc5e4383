package analysis

import (
	"path/filepath"
	"testing"

	"github.com/mcptape/mcptape/tape"
)

// withDir returns s with direction d (for events).
func withDir(d tape.Direction, s step) step { s.dir = d; return s }

// TestInspectCutMessages: a message the HTTP recorder announced as cut
// (an "error" event with "truncated":true just before it, same exchange
// and direction) is counted as cut and listed as a proxy error, not
// reported as invalid JSON; an unannounced one, or one announced for
// another exchange or direction, still is.
func TestInspectCutMessages(t *testing.T) {
	const cut = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"s":"AAAA`
	marker := `{"error":"request body decoded past 4 bytes: recorded cut, forwarded whole","truncated":true,"kept":60,"limit":"max-decoded"}`
	tests := []struct {
		name        string
		steps       []step
		cutMessages int64
		invalid     int64
		proxyErrors int64
	}{
		{name: "announced", steps: after(
			onExchange(3, withDir(tape.ClientToServer, evt(5*ms, tape.EventError, marker))),
			onExchange(3, c2s(5*ms, cut)),
		), cutMessages: 1, proxyErrors: 1},
		{name: "announced, response", steps: after(
			onExchange(3, c2s(4*ms, `{"jsonrpc":"2.0","id":7,"method":"ping"}`)),
			onExchange(3, withDir(tape.ServerToClient, evt(5*ms, tape.EventError, marker))),
			onExchange(3, s2c(5*ms, `{"jsonrpc":"2.0","id":7,"result":{"s":"AAA`)),
		), cutMessages: 1, proxyErrors: 1},
		{name: "not announced", steps: after(
			onExchange(3, c2s(5*ms, cut)),
		), invalid: 1},
		{name: "announced for another exchange", steps: after(
			onExchange(4, withDir(tape.ClientToServer, evt(5*ms, tape.EventError, marker))),
			onExchange(3, c2s(5*ms, cut)),
		), invalid: 1, proxyErrors: 1},
		{name: "announced for the other direction", steps: after(
			onExchange(3, withDir(tape.ServerToClient, evt(5*ms, tape.EventError, marker))),
			onExchange(3, c2s(5*ms, cut)),
		), invalid: 1, proxyErrors: 1},
		{name: "plain proxy error", steps: after(
			onExchange(3, withDir(tape.ClientToServer, evt(5*ms, tape.EventError, `{"error":"upstream refused"}`))),
			onExchange(3, c2s(5*ms, cut)),
		), invalid: 1, proxyErrors: 1},
		{name: "only the next message", steps: after(
			onExchange(3, withDir(tape.ClientToServer, evt(5*ms, tape.EventError, marker))),
			onExchange(3, c2s(5*ms, cut)),
			onExchange(3, c2s(6*ms, cut)),
		), cutMessages: 1, invalid: 1, proxyErrors: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := inspectSteps(t, tt.steps...)
			if rep.CutMessages != tt.cutMessages || violationCount(rep, "invalid-json") != tt.invalid || rep.ProxyErrorsN != tt.proxyErrors {
				t.Errorf("cut %d, invalid-json %d, proxy errors %d; want %d, %d, %d",
					rep.CutMessages, violationCount(rep, "invalid-json"), rep.ProxyErrorsN, tt.cutMessages, tt.invalid, tt.proxyErrors)
			}
		})
	}
}

// TestExportHARPlainExchange: a plain HTTP exchange (OAuth, discovery)
// has no messages; its request and response bodies come from the "end"
// event's request_body and body.
func TestExportHARPlainExchange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl.zst")
	writeRecords(t, path, "http", []tape.Record{
		httpEvt(1*tick, 1, tape.EventHTTP, `{"phase":"response","method":"POST","path":"/token","conn":1,"status":200,"content_type":"application/json","request_headers":{"Content-Type":["application/x-www-form-urlencoded"]},"response_headers":{"Content-Type":["application/json"]}}`),
		httpEvt(2*tick, 1, tape.EventHTTP, `{"phase":"end","method":"POST","path":"/token","conn":1,"status":200,"closed_by":"server","request_bytes":40,"response_bytes":30,"request_body":"grant_type=authorization_code&code=%3Credacted%3A1-1%3E","body":"{\"access_token\":\"<redacted:4-7>\"}"}`),
	})
	out, _ := export(t, path, ExportHAR)
	entries := validateHAR(t, out)
	if len(entries) != 1 {
		t.Fatalf("%d entries", len(entries))
	}
	for field, want := range map[string]string{
		"request.postData.text":     "grant_type=authorization_code&code=%3Credacted%3A1-1%3E",
		"request.postData.mimeType": "application/x-www-form-urlencoded",
		"response.content.text":     `{"access_token":"<redacted:4-7>"}`,
	} {
		if got := harField(entries[0], field); got != want {
			t.Errorf("%s = %q, want %q", field, got, want)
		}
	}
}

// TestMissingSessionHeaderStateless: once a server assigned an
// Mcp-Session-Id, a later request without one breaks the rule, except a
// 2026-07-28 request (by its Mcp-Protocol-Version header or by the version
// its session's requests carry): that revision has no session id.
func TestMissingSessionHeaderStateless(t *testing.T) {
	assigned := evt(0, tape.EventHTTP, `{"phase":"response","method":"POST","path":"/mcp","status":200,"request_headers":{},"response_headers":{"Mcp-Session-Id":["abc"]}}`)
	modernReq := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	tests := []struct {
		name  string
		steps []step
		want  int64
	}{
		{name: "2025 request without the header", steps: append([]step{assigned}, inSession("b",
			onExchange(2, c2s(1*ms, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)),
			onExchange(2, evt(2*ms, tape.EventHTTP, `{"phase":"response","method":"POST","path":"/mcp","status":400,"request_headers":{"Mcp-Protocol-Version":["2025-06-18"]}}`)))...),
			want: 1},
		{name: "2026-07-28 by its header", steps: append([]step{assigned}, inSession("b",
			onExchange(2, c2s(1*ms, modernReq)),
			onExchange(2, evt(2*ms, tape.EventHTTP, `{"phase":"response","method":"POST","path":"/mcp","status":200,"request_headers":{"Mcp-Protocol-Version":["2026-07-28"],"Mcp-Method":["tools/list"]}}`)))...)},
		{name: "2026-07-28 by its body", steps: append([]step{assigned}, inSession("b",
			onExchange(2, c2s(1*ms, modernReq)),
			onExchange(2, evt(2*ms, tape.EventHTTP, `{"phase":"response","method":"POST","path":"/mcp","status":200,"request_headers":{"Content-Type":["application/json"]}}`)))...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := inspectSteps(t, tt.steps...)
			if n := violationCount(rep, RuleMissingSessionHeader); n != tt.want {
				t.Errorf("%s counted %d times, want %d: %+v", RuleMissingSessionHeader, n, tt.want, rep.Violations)
			}
		})
	}
}
