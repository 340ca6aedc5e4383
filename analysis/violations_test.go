package analysis

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/tape"
)

const ms = time.Millisecond

// handshake returns the steps of an initialize exchange on version.
func handshake(version string) []step {
	return []step{
		c2s(0, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`),
		s2c(1*ms, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"`+version+`","capabilities":{},"serverInfo":{"name":"s","version":"2"}}}`),
		c2s(2*ms, `{"jsonrpc":"2.0","method":"notifications/initialized"}`),
	}
}

// after returns the handshake on 2025-06-18 followed by steps.
func after(steps ...step) []step {
	return append(handshake("2025-06-18"), steps...)
}

// inspectSteps writes the steps to a tape and inspects it.
func inspectSteps(t *testing.T, steps ...step) *Report {
	t.Helper()
	rep, err := Inspect(context.Background(), tempTape(t, steps...))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// violationCount returns how many violations of rule the report counts.
func violationCount(rep *Report, rule string) int64 {
	for _, v := range rep.Violations {
		if v.Rule == rule {
			return v.Count
		}
	}
	return 0
}

// ruleCases hold, for every rule, a tape that breaks it and, where it
// makes sense, the nearest tape that does not.
var ruleCases = []struct {
	rule      string
	bad, good []step
}{
	// Per-frame rules (jsonrpc.Classify), surfaced by the inspector.
	{"invalid-json", after(c2s(5*ms, `{"jsonrpc":"2.0",`)), after(c2s(5*ms, `{"jsonrpc":"2.0","method":"x"}`))},
	{"not-object", after(c2s(5*ms, `42`)), nil},
	{"missing-jsonrpc", after(c2s(5*ms, `{"id":1,"method":"ping"}`)), after(c2s(5*ms, `{"jsonrpc":"2.0","id":1,"method":"ping"}`))},
	{"wrong-jsonrpc", after(c2s(5*ms, `{"jsonrpc":"1.0","id":1,"method":"ping"}`)), nil},
	{"null-request-id", after(c2s(5*ms, `{"jsonrpc":"2.0","id":null,"method":"ping"}`)), after(c2s(5*ms, `{"jsonrpc":"2.0","id":1,"method":"ping"}`))},
	{"bad-id-type", after(c2s(5*ms, `{"jsonrpc":"2.0","id":true,"method":"ping"}`)), nil},
	{"non-integer-id", after(c2s(5*ms, `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`)), nil},
	{"result-and-error", after(c2s(5*ms, `{"jsonrpc":"2.0","id":1,"method":"ping"}`), s2c(6*ms, `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}`)),
		after(c2s(5*ms, `{"jsonrpc":"2.0","id":1,"method":"ping"}`), s2c(6*ms, `{"jsonrpc":"2.0","id":1,"result":{}}`))},
	{"no-result-or-error", after(s2c(5*ms, `{"jsonrpc":"2.0","id":1}`)), nil},
	{"bad-error-code", after(s2c(5*ms, `{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}`)), nil},
	{"missing-error-message", after(s2c(5*ms, `{"jsonrpc":"2.0","id":1,"error":{"code":1}}`)), nil},
	{"error-not-object", after(s2c(5*ms, `{"jsonrpc":"2.0","id":1,"error":"boom"}`)), nil},
	{"empty-batch", after(c2s(5*ms, `[]`)), nil},
	{"bad-method", after(c2s(5*ms, `{"jsonrpc":"2.0","method":5}`)), nil},
	{"method-with-result", after(c2s(5*ms, `{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}`)), nil},
	{"result-without-id", after(s2c(5*ms, `{"jsonrpc":"2.0","result":{}}`)), nil},
	{"not-a-message", after(c2s(5*ms, `{"jsonrpc":"2.0"}`)), nil},
	{"bad-params", after(c2s(5*ms, `{"jsonrpc":"2.0","id":1,"method":"ping","params":5}`)), nil},
	{"bad-progress-token", after(s2c(5*ms, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":true,"progress":1}}`)), nil},
	{"bad-cancel-target", after(c2s(5*ms, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}}`)), nil},
	{"invalid-utf8", after(c2s(5*ms, "{\"jsonrpc\":\"2.0\",\"method\":\"x\xff\"}")), nil},

	// Rules across messages.
	{RuleIDReused,
		after(c2s(5*ms, `{"jsonrpc":"2.0","id":1,"method":"ping"}`), c2s(6*ms, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)),
		after(c2s(5*ms, `{"jsonrpc":"2.0","id":1,"method":"ping"}`), s2c(6*ms, `{"jsonrpc":"2.0","id":1,"result":{}}`), c2s(7*ms, `{"jsonrpc":"2.0","id":2,"method":"ping"}`))},
	{RuleIDReusedAfter,
		after(c2s(5*ms, `{"jsonrpc":"2.0","id":"t","method":"ping"}`), s2c(6*ms, `{"jsonrpc":"2.0","id":"t","result":{}}`), c2s(7*ms, `{"jsonrpc":"2.0","id":"t","method":"ping"}`)),
		// The same id in the other direction, or in another session, is
		// another id.
		append(after(c2s(5*ms, `{"jsonrpc":"2.0","id":"t","method":"ping"}`), s2c(6*ms, `{"jsonrpc":"2.0","id":"t","result":{}}`),
			s2c(7*ms, `{"jsonrpc":"2.0","id":"t","method":"ping"}`), c2s(8*ms, `{"jsonrpc":"2.0","id":"t","result":{}}`)),
			inSession("2", c2s(9*ms, `{"jsonrpc":"2.0","id":"t","method":"ping"}`))...)},
	{RuleCancelled2026HTTP,
		[]step{onExchange(1, c2s(0, `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"export_report","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)),
			onExchange(2, c2s(5*ms, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12}}`))},
		// Over stdio, notifications/cancelled is how 2026-07-28 cancels.
		[]step{c2s(0, `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"export_report","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`),
			c2s(5*ms, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12}}`)}},
	{RuleResponseUnknownID,
		after(s2c(5*ms, `{"jsonrpc":"2.0","id":7,"result":{}}`)),
		after(c2s(4*ms, `{"jsonrpc":"2.0","id":7,"method":"ping"}`), s2c(5*ms, `{"jsonrpc":"2.0","id":7,"result":{}}`))},
	{RuleNotificationWithID,
		after(c2s(5*ms, `{"jsonrpc":"2.0","id":3,"method":"notifications/roots/list_changed"}`)),
		after(c2s(5*ms, `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`))},
	{RuleProgressAfterResp,
		after(c2s(5*ms, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":"p"}}}`),
			s2c(6*ms, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`),
			s2c(7*ms, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}`)),
		after(c2s(5*ms, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":"p"}}}`),
			s2c(6*ms, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}`),
			s2c(7*ms, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`))},
	{RuleProgressNotIncr,
		after(c2s(5*ms, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":9}}}`),
			s2c(6*ms, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":9,"progress":5}}`),
			s2c(7*ms, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":9,"progress":5}}`)),
		after(c2s(5*ms, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":9}}}`),
			s2c(6*ms, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":9,"progress":5}}`),
			s2c(7*ms, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":9,"progress":6}}`))},
	{RuleProgressUnknownToken,
		after(s2c(6*ms, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"x","progress":1}}`)),
		after(c2s(5*ms, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":"x"}}}`),
			s2c(6*ms, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"x","progress":1}}`))},
	{RuleProgressTokenInUse,
		after(c2s(5*ms, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":"p"}}}`),
			c2s(6*ms, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":"p"}}}`)),
		after(c2s(5*ms, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":"p"}}}`),
			c2s(6*ms, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t","_meta":{"progressToken":"q"}}}`))},
	{RuleBatchNotAllowed,
		after(c2s(5*ms, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`)),
		append(handshake("2025-03-26"), c2s(5*ms, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`))},
	{RuleInitializeBatched,
		[]step{c2s(0, `[{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}]`)},
		[]step{c2s(0, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26"}}`)}},
	{RuleInitializeCancelled,
		[]step{c2s(0, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`), c2s(1*ms, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":0}}`)},
		after(c2s(5*ms, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}`), c2s(6*ms, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`))},
	{RuleBeforeInitialize,
		[]step{c2s(0, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)},
		// A 2026-07-28 session has no handshake: its requests carry the version.
		[]step{c2s(0, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`),
			c2s(1*ms, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)}},
	// The good form is nil: the rule is a note (info) on a correct
	// exchange. Before the missing-session-header case, whose server
	// assigns a session id, in the violations-http fixture.
	{RuleStreamCopy, streamCopySteps(), nil},
	{RuleMissingSessionHeader,
		[]step{evt(0, tape.EventHTTP, `{"method":"POST","path":"/mcp","status":200,"request_headers":{},"response_headers":{"Mcp-Session-Id":["abc"]}}`),
			evt(1*ms, tape.EventHTTP, `{"method":"POST","path":"/mcp","status":400,"request_headers":{"Content-Type":"application/json"}}`)},
		[]step{evt(0, tape.EventHTTP, `{"method":"POST","path":"/mcp","status":200,"request_headers":{},"response_headers":{"Mcp-Session-Id":["abc"]}}`),
			evt(1*ms, tape.EventHTTP, `{"method":"POST","path":"/mcp","status":200,"request_headers":{"mcp-session-id":"abc"}}`)}},
	{RuleStreamedResponse,
		after(c2s(5*ms, chatCall("1")), s2c(6*ms, partStart("1")), s2c(7*ms, partDelta("1", "a")), s2c(8*ms, partEnd("1", "1", "1"))),
		after(c2s(5*ms, chatCall("1")), s2c(6*ms, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`))},
	// The good form is a stream too, which the info rule notes.
	{RuleStreamAfterEnd,
		after(c2s(5*ms, chatCall("1")), s2c(6*ms, partStart("1")), s2c(7*ms, partEnd("1", "1", "1")), s2c(8*ms, partDelta("1", "late"))),
		nil},
	{RuleMcpHeaderMissing, modernPost(`"Mcp-Protocol-Version":["2026-07-28"]`), modernPost(`"Mcp-Protocol-Version":["2026-07-28"],"Mcp-Method":["tools/list"]`)},
	{RuleMcpHeaderMismatch, modernPost(`"Mcp-Protocol-Version":["2026-07-28"],"Mcp-Method":["ping"]`),
		modernPost(`"Mcp-Protocol-Version":["2026-07-28"],"Mcp-Method":["tools/list"]`)},
}

// streamCopySteps is a call of session conn-2 answered on its own
// sessionless event stream and copied to conn-1's (LangGraph HTTP dialect).
func streamCopySteps() []step {
	open := `{"phase":"response","method":"GET","path":"/mcp/stream","status":200,"content_type":"text/event-stream","request_headers":{}}`
	on := func(sess string, x uint64, strm string, s step) step {
		s.sess, s.xchg, s.strm = sess, x, strm
		return s
	}
	return []step{
		on("conn-1", 1, "get", evt(0, tape.EventHTTP, open)),
		on("conn-2", 2, "get", evt(0, tape.EventHTTP, open)),
		on("conn-2", 3, "post", c2s(1*ms, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)),
		on("conn-2", 2, "get", s2c(2*ms, `{"jsonrpc":"2.0","id":1,"result":{}}`)),
		on("conn-1", 1, "get", s2c(2*ms, `{"jsonrpc":"2.0","id":1,"result":{}}`)),
	}
}

// modernPost is a 2026-07-28 tools/list POST with the given request
// headers (JSON members).
func modernPost(headers string) []step {
	return []step{
		onExchange(1, c2s(0, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)),
		onExchange(1, evt(1*ms, tape.EventHTTP, `{"phase":"response","method":"POST","path":"/mcp","status":200,"request_headers":{`+headers+`}}`)),
		onExchange(1, s2c(2*ms, `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`)),
	}
}

// TestEveryRuleIsReported breaks each rule on its own and checks that the
// report names it, and that the nearest correct exchange does not.
func TestEveryRuleIsReported(t *testing.T) {
	for _, c := range ruleCases {
		t.Run(c.rule, func(t *testing.T) {
			rep := inspectSteps(t, c.bad...)
			if n := violationCount(rep, c.rule); n != 1 {
				t.Errorf("rule %s counted %d times, want 1; violations: %+v", c.rule, n, rep.Violations)
			}
			found := false
			for _, p := range rep.Problems {
				if p.What == c.rule && strings.Contains(p.Summary, c.rule) && len(p.Details) == 1 {
					found = true
				}
			}
			if !found {
				t.Errorf("no problem line for %s with one example: %+v", c.rule, rep.Problems)
			}
			if c.good == nil {
				return
			}
			good := inspectSteps(t, c.good...)
			if n := violationCount(good, c.rule); n != 0 {
				t.Errorf("correct exchange reported %s %d times", c.rule, n)
			}
			if len(good.Violations) != 0 {
				t.Errorf("correct exchange has violations: %+v", good.Violations)
			}
		})
	}
}

// TestRulesAllCovered fails when a rule has no case in ruleCases.
func TestRulesAllCovered(t *testing.T) {
	var names []string
	for _, c := range ruleCases {
		names = append(names, c.rule)
	}
	for _, r := range Rules() {
		if !slices.Contains(names, r.Name) {
			t.Errorf("rule %s has no test case", r.Name)
		}
		if r.Text == "" {
			t.Errorf("rule %s has no text", r.Name)
		}
	}
}

func TestViolationsWorstFirstAndBounded(t *testing.T) {
	v := newViolations(2)
	ex := func() Example { return Example{Detail: "x"} }
	for i := 0; i < 5; i++ {
		v.add(RuleProgressUnknownToken, ex) // a warning
	}
	v.add(RuleIDReused, ex)
	v.add(RuleIDReused, ex)
	v.add("missing-jsonrpc", ex)
	list := v.list()
	var got []string
	for _, s := range list {
		got = append(got, s.Rule)
		if len(s.Examples) > 2 {
			t.Errorf("%s keeps %d examples, want at most 2", s.Rule, len(s.Examples))
		}
	}
	want := []string{RuleIDReused, "missing-jsonrpc", RuleProgressUnknownToken}
	if !slices.Equal(got, want) {
		t.Errorf("order %v, want %v (errors before warnings, then by count)", got, want)
	}
	if list[2].Count != 5 {
		t.Errorf("count %d, want 5", list[2].Count)
	}
}

// TestInvalidJSONSaysWhy: an invalid-json example says what is wrong with
// the frame: a frame nested deeper than the limit is said to be so, not
// merely "not valid JSON"; a broken frame names its syntax error.
func TestInvalidJSONSaysWhy(t *testing.T) {
	deep := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}}`
	tests := []struct {
		name, frame, want string
	}{
		{"too deep", deep, "JSON too deep at byte 10062: arrays and objects nested deeper than the limit of 10000"},
		{"cut", `{"jsonrpc":"2.0",`, "invalid JSON at byte 17: unexpected end of input, want a key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := inspectSteps(t, c2s(5*ms, tt.frame))
			for _, v := range rep.Violations {
				if v.Rule != "invalid-json" {
					continue
				}
				if len(v.Examples) != 1 || !strings.HasSuffix(v.Examples[0].Detail, ": "+tt.want) {
					t.Errorf("examples %+v, want one ending in %q", v.Examples, tt.want)
				}
				return
			}
			t.Errorf("no invalid-json violation: %+v", rep.Violations)
		})
	}
}
