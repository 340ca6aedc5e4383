package analysis

import (
	"testing"
)

// TestInspectStreamCopies: a server of the LangGraph HTTP dialect sends
// every message to every open sessionless event stream; the recorder puts
// the answer on the stream that carried it first in the session of its
// request, and the copies on other clients' streams stay in those
// streams' sessions. Those copies are noted (info), not taken for answers
// to unknown ids; a response on such a stream naming no request of the
// tape still is one, and so is one in a session that sent requests.
func TestInspectStreamCopies(t *testing.T) {
	const streamOpen = `{"phase":"response","method":"GET","path":"/mcp/stream","status":200,"content_type":"text/event-stream","request_headers":{"Accept":["text/event-stream"]}}`
	on := func(sess string, x uint64, strm string, s step) step {
		s.sess, s.xchg, s.strm = sess, x, strm
		return s
	}
	start := `{"jsonrpc":"2.0","id":7,"result":{"type":"content_start"}}`
	delta := `{"jsonrpc":"2.0","id":7,"result":{"type":"content_delta","delta":"hi"}}`
	end := `{"jsonrpc":"2.0","id":7,"result":{"type":"content_end","usage":{"total_tokens":2}}}`
	steps := []step{
		on("conn-1", 1, "get", evt(1*ms, "http", streamOpen)),
		on("conn-2", 2, "get", evt(2*ms, "http", streamOpen)),
		on("conn-3", 3, "post", c2s(2*ms, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)),
		on("conn-3", 3, "post", s2c(2*ms, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`)),
		on("conn-3", 3, "post", c2s(3*ms, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)),
		on("conn-3", 4, "post", c2s(3*ms, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"chat","arguments":{"query":"x"}}}`)),
		on("conn-3", 2, "get", s2c(4*ms, start)), // the answer, on conn-2's stream
		on("conn-1", 1, "get", s2c(4*ms, start)), // a copy
		on("conn-3", 2, "get", s2c(5*ms, delta)),
		on("conn-1", 1, "get", s2c(5*ms, delta)),
		on("conn-3", 2, "get", s2c(6*ms, end)),
		on("conn-1", 1, "get", s2c(6*ms, end)),
		on("conn-1", 1, "get", s2c(7*ms, `{"jsonrpc":"2.0","id":99,"result":{}}`)), // nobody's
		// A second answer in the session of the request: not a copy.
		on("conn-3", 2, "get", s2c(8*ms, `{"jsonrpc":"2.0","id":1,"result":{}}`)),
	}
	rep := inspectSteps(t, steps...)
	if n := violationCount(rep, RuleStreamCopy); n != 3 {
		t.Errorf("%d stream copies noted, want 3", n)
	}
	if n := violationCount(rep, RuleResponseUnknownID); n != 2 {
		t.Errorf("%d responses to unknown ids, want 2 (id 99, the second answer to id 1)", n)
	}
	for _, s := range rep.Sessions {
		want := int64(0)
		if s.ID == "conn-1" || s.ID == "conn-3" {
			want = 1
		}
		if s.Violations != want {
			t.Errorf("session %s: %d violations, want %d", s.ID, s.Violations, want)
		}
	}
	if rep.Streams == nil || rep.Streams.Operations != 1 {
		t.Errorf("streams %+v, want the one answer", rep.Streams)
	}
}
