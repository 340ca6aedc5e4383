package analysis

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"regexp"
	"testing"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/encoding/protojson"
)

// hexIDs matches the id members of an OTLP/JSON document.
var hexIDs = regexp.MustCompile(`"(traceId|spanId|parentSpanId)":"([0-9a-f]*)"`)

// parseOTLP reads an OTLP/JSON document with the real OTLP protobuf
// definitions (protojson, unknown fields refused). The OTLP JSON mapping
// writes trace and span ids in hex where protojson expects base64: they
// are converted first, and must be valid hex.
func parseOTLP(t *testing.T, doc []byte) *tracepb.TracesData {
	t.Helper()
	var bad error
	conv := hexIDs.ReplaceAllFunc(doc, func(m []byte) []byte {
		sub := hexIDs.FindSubmatch(m)
		b, err := hex.DecodeString(string(sub[2]))
		if err != nil {
			bad = err
		}
		return []byte(`"` + string(sub[1]) + `":"` + base64.StdEncoding.EncodeToString(b) + `"`)
	})
	if bad != nil {
		t.Fatalf("an id is not hex: %v", bad)
	}
	var td tracepb.TracesData
	if err := (protojson.UnmarshalOptions{}).Unmarshal(conv, &td); err != nil {
		t.Fatalf("not an OTLP/JSON trace document: %v\n%.2000s", err, doc)
	}
	return &td
}

// spansOf exports the tape at path as OTLP and returns its spans by name
// order of writing, checking ids and parents.
func spansOf(t *testing.T, path string) []*tracepb.Span {
	t.Helper()
	out, st := export(t, path, ExportOTLP)
	td := parseOTLP(t, out)
	if len(td.ResourceSpans) != 1 || len(td.ResourceSpans[0].ScopeSpans) != 1 {
		t.Fatalf("resource spans %d", len(td.ResourceSpans))
	}
	spans := td.ResourceSpans[0].ScopeSpans[0].Spans
	if int64(len(spans)) != st.Entries || len(spans) == 0 {
		t.Fatalf("%d spans, stats say %d", len(spans), st.Entries)
	}
	ids := map[string]bool{}
	for _, s := range spans {
		if len(s.TraceId) != 16 || len(s.SpanId) != 8 || s.StartTimeUnixNano == 0 || s.EndTimeUnixNano < s.StartTimeUnixNano {
			t.Errorf("span %s: trace %x span %x, %d..%d", s.Name, s.TraceId, s.SpanId, s.StartTimeUnixNano, s.EndTimeUnixNano)
		}
		ids[string(s.SpanId)] = true
	}
	for _, s := range spans {
		if len(s.ParentSpanId) > 0 && !ids[string(s.ParentSpanId)] {
			t.Errorf("span %s: parent %x is not in the document", s.Name, s.ParentSpanId)
		}
	}
	return spans
}

func attr(s *tracepb.Span, key string) string {
	for _, a := range s.Attributes {
		if a.Key == key {
			if v := a.Value.GetStringValue(); v != "" {
				return v
			}
			return a.Value.String()
		}
	}
	return ""
}

// TestExportOTLPRealPeers: the Go SDK client against mcptape serve
// (recorded: progress, a tool error, a JSON-RPC error, an MRTR
// elicitation, a cancel): one span per request, the MRTR rounds under
// one operation span, errors with an error status, one trace per session.
func TestExportOTLPRealPeers(t *testing.T) {
	spans := spansOf(t, filepath.Join(fixtureDir, "gosdk-refserver.jsonl.zst"))
	traces := map[string]bool{}
	var op *tracepb.Span
	children := 0
	errs := 0
	for _, s := range spans {
		traces[string(s.TraceId)] = true
		if attr(s, "mcptape.operation") == "mrtr" {
			op = s
		}
		if s.Status.GetCode() == tracepb.Status_STATUS_CODE_ERROR {
			errs++
		}
		if s.Name == "tools/call" || attr(s, "mcp.method.name") == "" {
			t.Errorf("span %q lacks its target or method", s.Name)
		}
	}
	if op == nil || op.Name != "tools/call ask" || op.Kind != tracepb.Span_SPAN_KIND_INTERNAL {
		t.Fatalf("no MRTR operation span: %v", op)
	}
	for _, s := range spans {
		if bytes.Equal(s.ParentSpanId, op.SpanId) {
			children++
			if s.StartTimeUnixNano < op.StartTimeUnixNano || s.EndTimeUnixNano > op.EndTimeUnixNano {
				t.Errorf("round %x outside its operation", s.SpanId)
			}
		}
	}
	if children != 2 || len(traces) != 1 || errs < 2 {
		t.Errorf("%d MRTR rounds, %d traces, %d error spans", children, len(traces), errs)
	}
}

// TestExportOTLPTasksAndTraceparent: task polls are children of the task's
// operation; a request's _meta.traceparent sets its trace and parent, and
// tracestate is kept.
func TestExportOTLPTasksAndTraceparent(t *testing.T) {
	spans := spansOf(t, filepath.Join(fixtureDir, "operations.jsonl.zst"))
	var task *tracepb.Span
	for _, s := range spans {
		if attr(s, "mcptape.operation") == "task" {
			task = s
		}
	}
	polls := 0
	for _, s := range spans {
		if task != nil && bytes.Equal(s.ParentSpanId, task.SpanId) {
			polls++
		}
	}
	if task == nil || polls != 3 { // the creating call, tasks/get, tasks/result
		t.Errorf("task %v with %d children", task, polls)
	}
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	steps := after(
		c2s(5*ms, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{"traceparent":"`+tp+`","tracestate":"vendor=1"}}}`),
		s2c(6*ms, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`),
		c2s(7*ms, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{},"_meta":{"traceparent":"00-00000000000000000000000000000000-00f067aa0ba902b7-01"}}}`),
		s2c(8*ms, `{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"bad"}}`),
		c2s(9*ms, `{"jsonrpc":"2.0","id":3,"method":"ping"}`),
	)
	path := tempTape(t, steps...)
	out, _ := export(t, path, ExportOTLP)
	td := parseOTLP(t, out)
	got := append([]*tracepb.Span(nil), td.ResourceSpans[0].ScopeSpans[0].Spans...)
	byID := map[string]*tracepb.Span{}
	for _, s := range got {
		byID[attr(s, "jsonrpc.request.id")] = s
	}
	s1, s2, s3 := byID["1"], byID["2"], byID["3"]
	if s1 == nil || s2 == nil || s3 == nil {
		t.Fatalf("spans %v", got)
	}
	if hex.EncodeToString(s1.TraceId) != "4bf92f3577b34da6a3ce929d0e0e4736" || hex.EncodeToString(s1.ParentSpanId) != "00f067aa0ba902b7" || s1.TraceState != "vendor=1" {
		t.Errorf("traceparent not honoured: trace %x parent %x state %q", s1.TraceId, s1.ParentSpanId, s1.TraceState)
	}
	if bytes.Equal(s2.TraceId, s1.TraceId) || len(s2.ParentSpanId) != 0 || s2.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR ||
		attr(s2, "rpc.jsonrpc.error_code") == "" {
		t.Errorf("an all-zero traceparent is invalid: the session's trace, with the error: %v", s2)
	}
	if attr(s3, "mcptape.unanswered") == "" || s3.Status.GetCode() != tracepb.Status_STATUS_CODE_ERROR || !bytes.Equal(s3.TraceId, s2.TraceId) {
		t.Errorf("unanswered ping: %v", s3)
	}
	var doc map[string]any
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
}
