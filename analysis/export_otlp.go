package analysis

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// The OTLP export writes one OTLP/JSON trace document (an
// ExportTraceServiceRequest: resourceSpans > scopeSpans > spans), ids in
// hex as the OTLP JSON mapping says. Each request paired with its
// response is a span (kind CLIENT: the requester's view), named after the
// method and its target ("tools/call echo"), with the attributes of the
// OpenTelemetry MCP conventions (mcp.method.name, gen_ai.tool.name,
// jsonrpc.request.id, mcp.session.id, rpc.jsonrpc.error_code, error.type)
// and an error status for JSON-RPC errors and isError results. The rounds
// of an MRTR operation and the polls of a task are children of one span
// for the logical operation. A request whose params._meta holds a W3C
// traceparent joins that trace under that parent (tracestate kept);
// otherwise each session is one trace. Ids not taken from a traceparent
// are derived from the tape (its start time, the session, the record), so
// the same tape gives the same document. Spans are written as they end:
// memory holds the requests in flight.

// otlp span kinds and status codes (opentelemetry/proto/trace/v1).
const (
	otlpKindInternal = 1
	otlpKindClient   = 3
	otlpStatusError  = 2
)

type (
	otlpValue struct {
		StringValue *string `json:"stringValue,omitempty"`
		IntValue    *string `json:"intValue,omitempty"` // int64 as a decimal string
		BoolValue   *bool   `json:"boolValue,omitempty"`
	}
	otlpAttr struct {
		Key   string    `json:"key"`
		Value otlpValue `json:"value"`
	}
	otlpStatus struct {
		Code    int    `json:"code,omitempty"`
		Message string `json:"message,omitempty"`
	}
	otlpSpan struct {
		TraceID      string     `json:"traceId"`
		SpanID       string     `json:"spanId"`
		TraceState   string     `json:"traceState,omitempty"`
		ParentSpanID string     `json:"parentSpanId,omitempty"`
		Name         string     `json:"name"`
		Kind         int        `json:"kind"`
		Start        string     `json:"startTimeUnixNano"`
		End          string     `json:"endTimeUnixNano"`
		Attributes   []otlpAttr `json:"attributes"`
		Status       otlpStatus `json:"status"`
	}
)

func strAttr(k, v string) otlpAttr { return otlpAttr{Key: k, Value: otlpValue{StringValue: &v}} }
func intAttr(k string, v int64) otlpAttr {
	s := strconv.FormatInt(v, 10)
	return otlpAttr{Key: k, Value: otlpValue{IntValue: &s}}
}
func boolAttr(k string, v bool) otlpAttr { return otlpAttr{Key: k, Value: otlpValue{BoolValue: &v}} }

// otlpReq is a request in flight, or a logical operation (op).
type otlpReq struct {
	span     otlpSpan
	seq      int64 // the request's record
	start    int64
	method   string
	name     string // tool, prompt or resource
	op       *otlpReq
	task     string // a task's key in otlpExporter.tasks
	terminal int64  // a task: when a terminal status was seen
}

// otlpExporter turns items into spans.
type otlpExporter struct {
	w       *bufio.Writer
	clock   tapeClock
	n       int64
	pairs   *Pairer[*otlpReq]
	mrtr    waitingOps[*otlpReq] // MRTR operations waiting for a retry, as the Inspector's
	in      *Inspector           // reading the tape alongside: knows the sessions (opScope)
	tasks   map[string]*otlpReq
	version map[string]string // session -> protocol version
	err     error
	pf      [paramCount]span  // params fields of the current request
	rf      [resultCount]span // result fields of the current response
}

// exportOTLP writes the tape read by sc as one OTLP/JSON document. An
// Inspector reads the tape alongside: a request whose answer the exporter
// does not see ends as the Inspector decides (refused, cut by the
// recorder's shutdown, broken off, cancelled, never answered, answered by
// an error with a null id), as inspect reports it.
func exportOTLP(sc *Scanner, h *tape.Header, w io.Writer, st *ExportStats) error {
	x := &otlpExporter{w: bufio.NewWriter(w), clock: newTapeClock(h.Time), pairs: NewPairer[*otlpReq](),
		mrtr: waitingOps[*otlpReq]{}, tasks: map[string]*otlpReq{}, version: map[string]string{}}
	in, err := NewInspector(h, func(o *options) error { o.onSettled = x.settled; return nil })
	if err != nil {
		return err
	}
	x.in = in
	service := h.Target
	if service == "" {
		service = "mcp-server"
	}
	res, _ := json.Marshal([]otlpAttr{strAttr("service.name", clip(service, 200)), strAttr("mcptape.transport", h.Transport)})
	fmt.Fprintf(x.w, `{"resourceSpans":[{"resource":{"attributes":%s},"scopeSpans":[{"scope":{"name":"mcptape","version":%q},"spans":[`, res, h.Version)
	for {
		it, err := sc.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		x.clock.add(it.Rec)
		if it.IsMessage() {
			x.message(it)
			st.Messages++
		}
		in.Add(it) // after message: an answer seen there ended its span
	}
	in.Finish(sc.Warning())
	x.finish()
	st.Entries = x.n
	fmt.Fprint(x.w, "]}]}]}\n")
	if x.err != nil {
		return x.err
	}
	return x.w.Flush()
}

// message handles one message item.
func (x *otlpExporter) message(it *Item) {
	rec, info := it.Rec, &it.Info
	switch info.Kind {
	case jsonrpc.KindRequest:
		if Pairable(info.ID) {
			x.request(it)
		}
	case jsonrpc.KindResponse, jsonrpc.KindError:
		if !Pairable(info.ID) {
			return
		}
		if req, ok := x.pairs.Close(rec.Session, Opposite(rec.Dir), info.ID); ok {
			x.response(it, req)
		}
	}
}

// ids derives a stable hex id of n bytes from parts.
func (x *otlpExporter) ids(n int, parts ...string) string {
	h := sha256.New()
	fmt.Fprint(h, x.clock.origin)
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write([]byte(p))
	}
	return hex.EncodeToString(h.Sum(nil)[:n])
}

func (x *otlpExporter) request(it *Item) {
	rec, info, frame := it.Rec, &it.Info, it.Frame
	f := payloadFields(it, "params", paramKeys, x.pf[:]) // as the Inspector reads them
	meta := f[pMeta].of(frame)
	req := &otlpReq{start: rec.Time, method: info.Method}
	switch info.Method {
	case mToolsCall, mPromptsGet:
		req.name, _ = stringValue(f[pName].of(frame))
	case mResRead:
		req.name, _ = stringValue(f[pURI].of(frame))
	case mInitialize:
		if v, ok := stringValue(f[pProtocolVersion].of(frame)); ok {
			x.version[rec.Session] = v
		}
	}
	if v, ok := lookupString(meta, metaVersion); ok {
		x.version[rec.Session] = v
	}
	sp := &req.span
	sp.Name = info.Method
	if req.name != "" {
		sp.Name += " " + clip(req.name, 80)
	}
	sp.Kind = otlpKindClient
	sp.TraceID = x.ids(16, "trace", rec.Session)
	sp.SpanID = x.ids(8, "span", strconv.FormatInt(it.Seq, 10), strconv.Itoa(it.Member))
	if tid, pid, ok := traceParent(lookupStringOr(meta, "traceparent")); ok {
		sp.TraceID, sp.ParentSpanID = tid, pid
		sp.TraceState = lookupStringOr(meta, "tracestate")
	}
	sp.Attributes = []otlpAttr{strAttr("mcp.method.name", info.Method), strAttr("jsonrpc.request.id", clip(string(info.ID.Raw), 60)),
		strAttr("mcp.session.id", rec.Session), strAttr("mcptape.direction", string(rec.Dir))}
	switch info.Method {
	case mToolsCall:
		sp.Attributes = append(sp.Attributes, strAttr("gen_ai.tool.name", req.name), strAttr("gen_ai.operation.name", "execute_tool"))
	case mPromptsGet:
		sp.Attributes = append(sp.Attributes, strAttr("gen_ai.prompt.name", req.name))
	case mResRead:
		sp.Attributes = append(sp.Attributes, strAttr("mcp.resource.uri", req.name))
	}
	if v := x.version[rec.Session]; v != "" {
		sp.Attributes = append(sp.Attributes, strAttr("mcp.protocol.version", v))
	}
	// A later round of an MRTR operation, or a poll of a task, is a child
	// of the operation's span.
	if mrtrMethod(info.Method) && (f[pInputResponses].end != 0 || f[pRequestState].end != 0) {
		req.op, _ = x.mrtr.latest(opKey{x.in.opScopeOf(rec), rec.Dir, info.Method, req.name})
	}
	if id, ok := stringValue(f[pTaskID].of(frame)); ok && strings.HasPrefix(info.Method, "tasks/") {
		req.op = x.tasks[taskKey(x.in.opScopeOf(rec), id)]
	}
	if op := req.op; op != nil {
		sp.TraceID, sp.ParentSpanID, sp.TraceState = op.span.TraceID, op.span.SpanID, op.span.TraceState
	}
	req.seq = it.Seq
	if prev, reused := x.pairs.Open(rec.Session, rec.Dir, info.ID, req); reused {
		x.settle(prev, OutcomeUnanswered, 0, rec.Time) // its id reused in flight: never answered, as inspect says
	}
}

// settled ends the span of a request the Inspector took out of flight
// with no answer the exporter saw: still in flight here under its id, and
// the same request (its record).
func (x *otlpExporter) settled(r *request, outcome string, code int64) {
	id, ok := r.id.jsonrpcID()
	if !ok {
		return
	}
	if req, ok := x.pairs.Lookup(r.sess.id, r.dir, id); ok && req.seq == r.seq {
		x.pairs.Close(r.sess.id, r.dir, id)
		x.settle(req, outcome, code, x.clock.last)
	}
}

// settle ends req's span at end with outcome (an Outcome constant), the
// error code of an OutcomeError: a failure has an error status, and every
// such span says its outcome (mcptape.outcome).
func (x *otlpExporter) settle(req *otlpReq, outcome string, code, end int64) {
	sp := &req.span
	if d := describeOutcome(outcome); d.failed {
		sp.Status = otlpStatus{Code: otlpStatusError, Message: d.text}
		sp.Attributes = append(sp.Attributes, strAttr("error.type", outcome))
	}
	if outcome == OutcomeError {
		sp.Attributes = append(sp.Attributes, intAttr("rpc.jsonrpc.error_code", code))
	}
	sp.Attributes = append(sp.Attributes, strAttr("mcptape.outcome", outcome))
	if outcome == OutcomeUnanswered {
		sp.Attributes = append(sp.Attributes, boolAttr("mcptape.unanswered", true))
	}
	x.end(req, end)
}

func (x *otlpExporter) response(it *Item, req *otlpReq) {
	rec, frame := it.Rec, it.Frame
	f := x.rf[:] // an error response has no result: none found
	clear(f)
	if it.Info.Kind == jsonrpc.KindResponse {
		f = payloadFields(it, "result", resultKeys, f) // as the Inspector reads them
	}
	sp := &req.span
	if it.Info.Kind == jsonrpc.KindError {
		msg, _ := lookupString(frame, "error", "message")
		sp.Status = otlpStatus{Code: otlpStatusError, Message: clip(msg, 200)}
		sp.Attributes = append(sp.Attributes, intAttr("rpc.jsonrpc.error_code", it.Info.ErrorCode),
			strAttr("error.type", strconv.FormatInt(it.Info.ErrorCode, 10)))
	} else if string(f[rIsError].of(frame)) == "true" {
		sp.Status = otlpStatus{Code: otlpStatusError, Message: "tool returned isError"}
		sp.Attributes = append(sp.Attributes, strAttr("error.type", "tool_error"))
	}
	if req.method == mInitialize {
		if v, ok := stringValue(f[rProtocolVersion].of(frame)); ok {
			x.version[rec.Session] = v
		}
	}
	resultType, _ := stringValue(f[rResultType].of(frame))
	scope := x.in.opScopeOf(rec)
	key := opKey{scope, Opposite(rec.Dir), req.method, req.name}
	taskID, isTask := lookupString(f[rTask].of(frame), "taskId")
	if !isTask {
		taskID, isTask = stringValue(f[rTaskID].of(frame))
	}
	switch {
	case resultType == resultInputRequired && mrtrMethod(req.method):
		if req.op == nil { // a retry's operation waits already
			req.op = x.operation(req, "mrtr")
			if oldest, ok := x.mrtr.wait(key, req.op); ok {
				x.unfinished(oldest, req.op.start)
			}
		}
		x.end(req, rec.Time)
	case req.op != nil && req.op.task == "" && mrtrMethod(req.method): // the last round
		x.mrtr.done(key, req.op)
		x.end(req, rec.Time)
		req.op.span.Status = req.span.Status
		x.end(req.op, rec.Time)
	case isTask && req.op == nil && !strings.HasPrefix(req.method, "tasks/"):
		op := x.operation(req, "task")
		op.task = taskKey(scope, taskID)
		x.tasks[op.task] = op
		x.end(req, rec.Time)
	default:
		x.end(req, rec.Time)
		if op := req.op; op != nil && op.task != "" && x.tasks[op.task] == op {
			status, _ := stringValue(f[rStatus].of(frame))
			switch {
			case req.method == mTasksResult:
				if req.span.Status.Code == otlpStatusError {
					op.span.Status = req.span.Status
				}
				delete(x.tasks, op.task)
				x.end(op, rec.Time)
			case status == "completed" || status == "failed" || status == "cancelled":
				op.terminal = rec.Time // ended unless a tasks/result follows
				if status != "completed" {
					op.span.Status = otlpStatus{Code: otlpStatusError, Message: "task " + status}
				}
			}
		}
	}
}

// operation starts the span of a logical operation that req opened, and
// makes req its first child.
func (x *otlpExporter) operation(req *otlpReq, kind string) *otlpReq {
	op := &otlpReq{start: req.start, method: req.method, name: req.name}
	op.span = req.span
	req.span.ParentSpanID = x.ids(8, "op", req.span.SpanID)
	op.span.Kind = otlpKindInternal
	op.span.SpanID = req.span.ParentSpanID
	op.span.Status = otlpStatus{}
	op.span.Attributes = append([]otlpAttr{strAttr("mcptape.operation", kind)}, req.span.Attributes[:4]...)
	if len(req.span.Attributes) > 4 && req.method == mToolsCall {
		op.span.Attributes = append(op.span.Attributes, strAttr("gen_ai.tool.name", req.name))
	}
	return op
}

// end writes req's span, ending at end.
func (x *otlpExporter) end(req *otlpReq, end int64) {
	sp := req.span
	sp.Start = strconv.FormatInt(req.start, 10)
	sp.End = strconv.FormatInt(max(end, req.start), 10)
	b, err := json.Marshal(&sp)
	if err != nil {
		x.err = cmpErr(x.err, err)
		return
	}
	if x.n > 0 {
		x.w.WriteByte(',')
	}
	x.w.Write(b)
	x.n++
}

// finish ends what is left at the tape's end, once the Inspector
// finished (its requests still in flight were settled): requests it did
// not take for requests, as never answered, then open operations.
func (x *otlpExporter) finish() {
	for _, p := range x.pairs.Pending() {
		x.settle(p.Value, OutcomeUnanswered, 0, x.clock.last)
	}
	for _, ops := range []map[string]*otlpReq{x.tasks, mrtrByKey(x.mrtr)} {
		for _, k := range slices.Sorted(maps.Keys(ops)) {
			if op := ops[k]; op.terminal != 0 { // a task that ended, its result never fetched
				x.end(op, op.terminal)
			} else {
				x.unfinished(op, x.clock.last)
			}
		}
	}
}

// unfinished ends the span of an operation that never ended at end.
func (x *otlpExporter) unfinished(op *otlpReq, end int64) {
	op.span.Status = otlpStatus{Code: otlpStatusError, Message: "operation not finished"}
	x.end(op, end)
}

func mrtrByKey(m waitingOps[*otlpReq]) map[string]*otlpReq {
	out := make(map[string]*otlpReq, len(m))
	for k, l := range m {
		for i, op := range l {
			out[fmt.Sprintf("%s\x00%s\x00%s\x00%s\x00%09d", k.session, k.dir, k.method, k.name, i)] = op
		}
	}
	return out
}

// traceParent parses a W3C traceparent ("00-<32 hex>-<16 hex>-<2 hex>").
func traceParent(s string) (traceID, spanID string, ok bool) {
	parts := strings.Split(strings.TrimSpace(s), "-")
	if len(parts) < 4 || len(parts[0]) != 2 || parts[0] == "ff" || len(parts[1]) != 32 || len(parts[2]) != 16 {
		return "", "", false
	}
	for _, p := range parts[:3] {
		if _, err := hex.DecodeString(p); err != nil || strings.ToLower(p) != p {
			return "", "", false
		}
	}
	if strings.Trim(parts[1], "0") == "" || strings.Trim(parts[2], "0") == "" {
		return "", "", false // all-zero ids are invalid
	}
	return parts[1], parts[2], true
}

func lookupStringOr(data []byte, path ...string) string {
	s, _ := lookupString(data, path...)
	return s
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
