package analysis

import (
	"cmp"
	"errors"
	"slices"

	"github.com/mcptape/mcptape/jsonrpc"
)

// Severity ranks problems; the text report lists the worst first.
type Severity int

// Severities, worst last so that larger is worse.
const (
	SeverityInfo Severity = iota
	SeverityWarning
	SeverityError
)

var severityNames = [...]string{"info", "warning", "error"}

// String returns "info", "warning" or "error".
func (s Severity) String() string {
	if int(s) < len(severityNames) && s >= 0 {
		return severityNames[s]
	}
	return "severity?"
}

// MarshalText writes the severity's name.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Rule is a protocol rule the analysis checks. Names are stable: they are
// safe to match in scripts.
type Rule struct {
	Name     string
	Severity Severity
	// Text says what breaks the rule.
	Text string
}

// Rules checked on the message stream, beyond the per-frame rules of
// jsonrpc.Classify (which keep their jsonrpc names, see FrameRules).
const (
	RuleIDReused             = "id-reused-in-flight"
	RuleIDReusedAfter        = "id-reused-after-answer"
	RuleCancelled2026HTTP    = "cancelled-notification-2026-http"
	RuleResponseUnknownID    = "response-unknown-id"
	RuleNotificationWithID   = "notification-with-id"
	RuleProgressAfterResp    = "progress-after-response"
	RuleProgressNotIncr      = "progress-not-increasing"
	RuleProgressUnknownToken = "progress-unknown-token"
	RuleProgressTokenInUse   = "progress-token-in-use"
	RuleBatchNotAllowed      = "batch-not-allowed"
	RuleInitializeBatched    = "initialize-in-batch"
	RuleInitializeCancelled  = "initialize-cancelled"
	RuleBeforeInitialize     = "request-before-initialize"
	RuleMissingSessionHeader = "missing-session-header"
	RuleStreamedResponse     = "streamed-response"
	RuleStreamAfterEnd       = "stream-part-after-end"
	RuleStreamCopy           = "stream-copy"
)

// streamRules describes the rules checked across messages.
var streamRules = []Rule{
	{RuleIDReused, SeverityError, "request id reused while the first request is in flight"},
	{RuleIDReusedAfter, SeverityError, "request id used again after its request was answered (ids are unique within a session)"},
	{RuleCancelled2026HTTP, SeverityWarning, "notifications/cancelled over 2026-07-28 Streamable HTTP, where a request is cancelled by closing its stream"},
	{RuleResponseUnknownID, SeverityError, "response to an id that is not in flight"},
	{RuleNotificationWithID, SeverityError, "notification method sent with an id"},
	{RuleProgressAfterResp, SeverityError, "progress notification after the response"},
	{RuleProgressNotIncr, SeverityError, "progress value not greater than the one before"},
	{RuleProgressUnknownToken, SeverityWarning, "progress notification with a token of no request in flight"},
	{RuleProgressTokenInUse, SeverityError, "progress token already used by a request in flight"},
	{RuleBatchNotAllowed, SeverityError, "batch on a protocol version without batches (only 2025-03-26 has them)"},
	{RuleInitializeBatched, SeverityError, "initialize sent in a batch"},
	{RuleInitializeCancelled, SeverityError, "initialize request cancelled"},
	{RuleBeforeInitialize, SeverityError, "client request other than ping before initialize"},
	{RuleStreamedResponse, SeverityInfo, "answer streamed as several results under one id, ended by a terminal one " +
		"(non-standard extension: LangGraph's content_start, content_delta, content_end)"},
	{RuleStreamAfterEnd, SeverityError, "stream part (delta) for a request whose streamed answer had ended"},
	{RuleStreamCopy, SeverityInfo, "copy of an answer to another client's request on a sessionless event stream " +
		"(the LangGraph HTTP dialect sends every message to every open stream)"},
	{RuleMissingSessionHeader, SeverityError, "HTTP request without Mcp-Session-Id after the server assigned one"},
	{RuleMcpHeaderMissing, SeverityError, "2026-07-28 request without the Mcp-Method, Mcp-Name or Mcp-Param-* header it needs"},
	{RuleMcpHeaderMismatch, SeverityError, "2026-07-28 Mcp-Method, Mcp-Name or Mcp-Param-* header that disagrees with the body"},
}

// frameRuleText describes the per-frame rules of jsonrpc.Classify.
var frameRuleText = map[jsonrpc.Violation]string{
	jsonrpc.ViolationInvalidJSON:         "the frame is not valid JSON (or is nested past the limit of 10000)",
	jsonrpc.ViolationNotObject:           "the frame is a JSON string, number or literal",
	jsonrpc.ViolationMissingJSONRPC:      `no "jsonrpc" member`,
	jsonrpc.ViolationWrongJSONRPC:        `"jsonrpc" is not "2.0"`,
	jsonrpc.ViolationNullRequestID:       "a request with a null id",
	jsonrpc.ViolationBadIDType:           "an id that is an object, an array or a boolean",
	jsonrpc.ViolationNonIntegerID:        "a numeric id with a fraction or exponent",
	jsonrpc.ViolationResultAndError:      "a response with both result and error",
	jsonrpc.ViolationNoResultOrError:     "an id without method, result or error",
	jsonrpc.ViolationBadErrorCode:        "error.code missing or not an integer",
	jsonrpc.ViolationMissingErrorMessage: "error.message missing or not a string",
	jsonrpc.ViolationErrorNotObject:      `"error" is not an object`,
	jsonrpc.ViolationEmptyBatch:          "an empty batch",
	jsonrpc.ViolationBadMethod:           `"method" is not a string`,
	jsonrpc.ViolationMethodWithResult:    `"method" together with "result" or "error"`,
	jsonrpc.ViolationResultWithoutID:     "a success response without an id",
	jsonrpc.ViolationNotMessage:          "an object that is no JSON-RPC message",
	jsonrpc.ViolationBadParams:           `"params" is not an object or an array`,
	jsonrpc.ViolationBadProgressToken:    "a progress token that is not a string or an integer",
	jsonrpc.ViolationBadCancelTarget:     "a cancel target that is not a string or an integer",
	jsonrpc.ViolationInvalidUTF8:         "a string that is not valid UTF-8",
}

// invalidWhy says what is wrong with an invalid JSON frame (the syntax
// error and its offset, or a nesting deeper than the limit) when
// formatted: the frame is scanned again only for an example kept.
type invalidWhy []byte

func (f invalidWhy) String() string {
	var se *jsonrpc.SyntaxError
	if err := jsonrpc.Validate(f); errors.As(err, &se) {
		return se.Error()
	}
	return "not valid JSON"
}

// FrameRules returns the rules checked on each frame by jsonrpc.Classify,
// named as jsonrpc names them, lowest bit first.
func FrameRules() []Rule {
	var out []Rule
	for bit := jsonrpc.Violation(1); bit != 0; bit <<= 1 {
		text, ok := frameRuleText[bit]
		if !ok {
			continue
		}
		out = append(out, Rule{Name: bit.String(), Severity: SeverityError, Text: text})
	}
	return out
}

// Rules returns every rule the analysis checks: the per-frame rules, then
// the rules across messages.
func Rules() []Rule {
	return append(FrameRules(), streamRules...)
}

// ruleIndex maps a rule name to its description.
var ruleIndex = func() map[string]Rule {
	m := map[string]Rule{}
	for _, r := range Rules() {
		m[r.Name] = r
	}
	return m
}()

// ViolationStats counts one rule's violations in a tape.
type ViolationStats struct {
	Rule     string    `json:"rule"`
	Severity Severity  `json:"severity"`
	Text     string    `json:"text"`
	Count    int64     `json:"count"`
	Examples []Example `json:"examples"`
}

// Example points at one message of a tape.
type Example struct {
	Session  string `json:"session"`
	Seq      int64  `json:"record"`    // record number in the tape
	OffsetNS int64  `json:"offset_ns"` // time since the tape's start
	Detail   string `json:"detail"`
}

// violations counts rule violations with a few examples each.
type violations struct {
	max   int
	byKey map[string]*ViolationStats
}

func newViolations(maxExamples int) *violations {
	return &violations{max: maxExamples, byKey: map[string]*ViolationStats{}}
}

// add counts one violation of rule; ex is built only when kept.
func (v *violations) add(rule string, ex func() Example) {
	st := v.byKey[rule]
	if st == nil {
		r, ok := ruleIndex[rule]
		if !ok {
			r = Rule{Name: rule, Severity: SeverityError, Text: rule}
		}
		st = &ViolationStats{Rule: rule, Severity: r.Severity, Text: r.Text}
		v.byKey[rule] = st
	}
	st.Count++
	if len(st.Examples) < v.max {
		st.Examples = append(st.Examples, ex())
	}
}

// list returns the statistics, worst first: by severity, then count, then
// name.
func (v *violations) list() []ViolationStats {
	out := make([]ViolationStats, 0, len(v.byKey))
	for _, st := range v.byKey {
		out = append(out, *st)
	}
	slices.SortFunc(out, func(a, b ViolationStats) int {
		return cmp.Or(cmp.Compare(b.Severity, a.Severity), cmp.Compare(b.Count, a.Count), cmp.Compare(a.Rule, b.Rule))
	})
	return out
}
