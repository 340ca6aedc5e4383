package analysis

import (
	"testing"
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
