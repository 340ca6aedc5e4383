package analysis

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/mcptape/mcptape/tape"
)

// TestMRTRSpansAcrossConnectionsAndCalls: the OTLP export follows MRTR
// operations as inspect does. A sessionless recording (a session per
// connection) whose retry comes on another connection than its first
// round, and a session that gives up on a tool, calls it again and retries
// that: every retry's span is a child of its own operation's span, and
// only the operation given up on ends "not finished". (The retry on
// another connection found no operation, which ended not finished; a
// second call of the tool hid the first, whose span was never written.)
func TestMRTRSpansAcrossConnectionsAndCalls(t *testing.T) {
	ask := func(at time.Duration, id, more string) step {
		return c2s(at, `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"ask"`+more+`}}`)
	}
	input := func(at time.Duration, id string) step {
		return s2c(at, `{"jsonrpc":"2.0","id":`+id+`,"result":{"resultType":"input_required","inputRequests":{"x":{"method":"roots/list"}}}}`)
	}
	done := func(at time.Duration, id string) step {
		return s2c(at, `{"jsonrpc":"2.0","id":`+id+`,"result":{"resultType":"complete","content":[]}}`)
	}
	const retry = `,"inputResponses":{"x":{"roots":[]}}`
	var steps []step
	for i, conn := range []string{"conn-1", "conn-2"} {
		steps = append(steps, inSession(conn, evt(0, tape.EventOpen, fmt.Sprintf(`{"kind":"connection","how":"connection","conn":%d}`, i+1)))...)
	}
	steps = append(steps, inSession("conn-1", onExchange(1, ask(1*ms, "1", "")), onExchange(1, input(2*ms, "1")))...)
	steps = append(steps, inSession("conn-2", onExchange(2, ask(3*ms, "2", retry)), onExchange(2, done(4*ms, "2")))...)
	steps = append(steps, inSession("s", ask(5*ms, "1", ""), input(6*ms, "1"), ask(7*ms, "2", ""), input(8*ms, "2"),
		ask(9*ms, "3", retry), done(10*ms, "3"))...)
	path := filepath.Join(t.TempDir(), "t.jsonl.zst")
	writeTapeAs(t, path, "http", steps)
	spans := spansOf(t, path)
	ops := map[string]*tracepb.Span{}
	for _, s := range spans {
		if attr(s, "mcptape.operation") == "mrtr" {
			ops[string(s.SpanId)] = s
		}
	}
	var notFinished int
	for _, s := range ops {
		if s.Status.GetMessage() == "operation not finished" {
			notFinished++
		}
	}
	var retries int
	for _, s := range spans {
		if attr(s, "mcptape.operation") == "" && ops[string(s.ParentSpanId)] != nil {
			retries++
		}
	}
	// Operations: conn-1's (retried on conn-2), s's first (given up), s's
	// second (retried): their six rounds under them.
	if len(ops) != 3 || notFinished != 1 || retries != 5 {
		t.Errorf("%d operation spans, %d not finished, %d rounds under one; want 3, 1, 5", len(ops), notFinished, retries)
	}
}
