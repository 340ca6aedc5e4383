package analysis

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/tape"
)

// TestInspectNullIDErrorOverWebSocket: a WebSocket connection is one
// exchange carrying every message of its session, so a parse error with
// a null id (the answer to a garbage frame) answers no request in flight
// there, unlike the null-id error of an HTTP exchange holding one
// request.
func TestInspectNullIDErrorOverWebSocket(t *testing.T) {
	ws := func(s step) step { s.xchg, s.strm = 1, "ws"; return s }
	steps := []step{
		ws(c2s(1*ms, `garbage{`)),
		ws(c2s(2*ms, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)),
		ws(s2c(3*ms, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`)),
		ws(s2c(4*ms, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`)),
	}
	rep := inspectSteps(t, steps...)
	if n := violationCount(rep, RuleResponseUnknownID); n != 0 {
		t.Errorf("%d response-unknown-id: the parse error was taken for initialize's answer", n)
	}
	if l := latencyOf(t, rep, "c2s", mInitialize); l.Count != 1 || l.Errors != 0 || l.MaxNS != int64(2*ms) {
		t.Errorf("initialize %+v, want answered without error after 2ms", l)
	}
}

// TestInspectWebSocketExchangeStaysSmall: the requests remembered for a
// WebSocket connection, one exchange for its whole session, are those in
// flight, not every request the session ever sent (memory grew with the
// session, and each server message walked them all to time first chunks:
// export of requests went quadratic), and its operations have no first
// chunk (a WebSocket answer has no stream of its own; null, as over stdio).
func TestInspectWebSocketExchangeStaysSmall(t *testing.T) {
	const n = 2000
	steps := make([]step, 0, 2*n)
	for i := range n {
		at := time.Duration(i+1) * ms
		steps = append(steps,
			step{at: at, dir: "c2s", msg: fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i), xchg: 1, strm: "ws"},
			step{at: at + ms/2, dir: "s2c", msg: fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{}}`, i), xchg: 1, strm: "ws"})
	}
	var ops, chunked int
	in, err := NewInspector(&tape.Header{Transport: "ws"}, WithOperations(func(op *Operation) {
		ops++
		if op.FirstChunkNS >= 0 {
			chunked++
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	items, err := scanAll(t, tempTape(t, steps...))
	if err != nil {
		t.Fatal(err)
	}
	most := 0
	for i := range items {
		in.Add(&items[i])
		most = max(most, len(in.exchanges[1]))
	}
	in.Finish(nil)
	if most > 64 {
		t.Errorf("up to %d requests remembered for the connection with one in flight", most)
	}
	if ops != n || chunked != 0 {
		t.Errorf("%d operations, %d with a first chunk; want %d, none", ops, chunked, n)
	}
}

// TestInspectWebSocketMessageOverLimit: a message larger than the
// recorder's limit ends the WebSocket session with 1009 and is not
// recorded; the close event that says so is a proxy error and counts the
// message as not recorded. A connection that merely dropped is neither.
func TestInspectWebSocketMessageOverLimit(t *testing.T) {
	ws := func(s step) step { s.xchg, s.strm = 1, "ws"; return s }
	tooBig := `{"kind":"close","code":1009,"error":"websocket: client frame 5 at byte 236: message of at least 6291554 bytes, larger than the limit of 1048576"}`
	dropped := `{"kind":"close","abrupt":true,"error":"connection closed without a close frame"}`
	tests := []struct {
		name           string
		data           string
		errors, unsent int64
	}{
		{"over the limit", tooBig, 1, 1},
		{"dropped", dropped, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := inspectSteps(t,
				ws(c2s(1*ms, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)),
				ws(s2c(2*ms, `{"jsonrpc":"2.0","id":1,"result":{}}`)),
				ws(withDir(tape.ClientToServer, evt(3*ms, tape.EventWS, tt.data))))
			if rep.ProxyErrorsN != tt.errors || rep.UnrecordedMessages != tt.unsent {
				t.Errorf("%d proxy errors, %d messages not recorded; want %d, %d", rep.ProxyErrorsN, rep.UnrecordedMessages, tt.errors, tt.unsent)
			}
			if tt.errors > 0 && (len(rep.ProxyErrors) != 1 || !strings.Contains(rep.ProxyErrors[0].Detail, "larger than the limit")) {
				t.Errorf("proxy errors %+v", rep.ProxyErrors)
			}
		})
	}
}

// TestInspectRefusedUpgrade: a WebSocket upgrade the server refused (403
// from its Origin check) reaches no session; it is listed, as the HTTP
// refusals are, rather than leaving a report with no problem and no
// session.
func TestInspectRefusedUpgrade(t *testing.T) {
	refused := `{"phase":"end","method":"GET","path":"/mcp","status":403,"request_headers":{"Connection":["Upgrade"],"Upgrade":["websocket"],"Origin":["http://evil.example"]}}`
	plain := `{"phase":"end","method":"GET","path":"/mcp","status":404,"request_headers":{"Accept":["*/*"]}}`
	rep := inspectSteps(t, onExchange(1, evt(1*ms, tape.EventHTTP, refused)), onExchange(2, evt(2*ms, tape.EventHTTP, plain)))
	if rep.RefusedUpgradesN != 1 || len(rep.RefusedUpgrades) != 1 || rep.RefusedUpgrades[0].Detail != "GET /mcp: HTTP 403" {
		t.Errorf("refused upgrades %d %+v, want the 403", rep.RefusedUpgradesN, rep.RefusedUpgrades)
	}
	found := false
	for _, p := range rep.Problems {
		found = found || p.What == "ws-refused"
	}
	if !found {
		t.Errorf("problems %+v lack ws-refused", rep.Problems)
	}
}
