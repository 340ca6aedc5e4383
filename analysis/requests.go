package analysis

import (
	"fmt"

	"github.com/mcptape/mcptape/tape"
)

// RequestsSchemaVersion is the version of the requests table (see
// docs/requests-format.md): every row carries it, so files of different
// versions can sit side by side in one query. It changes when a column
// changes meaning or goes away, or when the outcome column gets a new
// value; adding a column does not change it. Version 2 added the outcomes
// OutcomeCutByShutdown and OutcomeBrokenOff, version 3 OutcomeClientGone,
// version 4 OutcomeLostInGap.
const RequestsSchemaVersion = 4

// Outcomes of an Operation.
const (
	OutcomeOK         = "ok"         // answered with a result
	OutcomeError      = "error"      // answered with a JSON-RPC error (Operation.ErrorCode)
	OutcomeToolError  = "tool_error" // a tools/call result with isError true
	OutcomeCancelled  = "cancelled"  // cancelled and never answered
	OutcomeUnanswered = "unanswered" // never answered, or its id reused before an answer
	OutcomeAbandoned  = "abandoned"  // MRTR: input_required, never retried
	OutcomeUnfinished = "unfinished" // a task that never reached a terminal status
	OutcomeRefused    = "refused"    // HTTP: the server ended the exchange with an error status, no JSON-RPC answer
	// the recorder's own shutdown ended the request before the server
	// answered: it cut the HTTP exchange, before any response or after
	// the response had started (RequestRef.Status), or the request was in
	// flight when the recorder stopped; not the server's doing
	OutcomeCutByShutdown = "cut_by_shutdown"
	// the server broke off before the answer: its HTTP response failed
	// mid-way, or it ended the session with the request in flight (its
	// WebSocket connection lost or closed by the server, an HTTP session
	// it answered 404 for, a legacy SSE stream it ended, a stdio server
	// that exited by itself); the server's doing
	OutcomeBrokenOff = "broken_off"
	// the client left before the answer: it ended the session with the
	// request in flight (a stdio client closed its input, and the server
	// then exited, by itself or ended by the recorder after its grace
	// period, without answering; an HTTP client deleted the session or
	// closed its legacy SSE stream; a WebSocket client closed or lost its
	// connection); not the server's doing
	OutcomeClientGone = "client_gone"
	// the answer is unknown: no answer in the tape, and records are
	// missing after the request (a gap marker: a tape of a rotated
	// recording missing or damaged, records the recorder lost to a write
	// error), before its session's close or the tape's end; the answer
	// may be among them
	OutcomeLostInGap = "lost_in_gap"
)

// Operation is one logical operation of a tape as Inspect pairs it: a
// request and its response, or the rounds of a multi-round-trip request
// (MRTR) and their final answer, or a task from the request that created
// it to its result. Inspect's latency tables are made of exactly the
// operations with a latency (Answered); the others are the requests it
// reports as unanswered, cancelled, abandoned or unfinished.
type Operation struct {
	Session         string
	ProtocolVersion string // the session's, as known when the operation ended
	Client          *Peer  // the session's client, nil when unknown
	Dir             tape.Direction
	Method          string
	Name            string // tool or prompt name, or resource URI
	ID              string // the (first) request's id as raw JSON
	Seq             int64  // the (first) request's record number in the tape
	StartNS         int64  // the (first) request's time, ns since the Unix epoch
	LatencyNS       int64  // start to final answer; valid when Answered; -1 when unknown (answer stamped before the start: a clock step back)
	FirstProgressNS int64  // start to the first progress notification; -1 for none
	FirstChunkNS    int64  // HTTP: start to the first message the server sent on the request's exchange; -1 for none
	Answered        bool
	Outcome         string // one of the Outcome constants
	ErrorCode       int64  // the JSON-RPC error code when Outcome is OutcomeError
	Cancelled       bool   // a notifications/cancelled named the request
	RequestBytes    int64  // bytes of the request frames (every MRTR round)
	ResponseBytes   int64  // bytes of the response frames (every MRTR round)
	Rounds          int64  // MRTR round trips, 0 when not an MRTR operation
	Task            bool   // the request created a task
	Polls           int64  // task: tasks/get, tasks/result and tasks/cancel requests about it
}

// WithOperations has the Inspector call fn with each logical operation as
// it ends (when it is answered, or at Finish for what is still open), in
// that order. fn must not keep the *Operation, which is reused; the
// inspection runs on the goroutine that calls Add and Finish.
func WithOperations(fn func(*Operation)) Option {
	return func(o *options) error {
		if fn == nil {
			return fmt.Errorf("operations: nil function")
		}
		o.onOp = fn
		return nil
	}
}

// emitOp hands the operation of req (with MRTR op, when not nil) to the
// WithOperations function. end is the time of the final answer (0 for
// none), resp the bytes of the answer(s) not yet counted on op.
func (in *Inspector) emitOp(req *request, op *operation, outcome string, end, resp, code int64) {
	if in.o.onSettled != nil && (end == 0 || outcome == OutcomeError) { // others: their answer was seen
		in.o.onSettled(req, outcome, code)
	}
	if in.o.onOp == nil {
		return
	}
	o := &in.op
	s := req.sess
	*o = Operation{Session: s.id, ProtocolVersion: s.version, Client: s.client, Dir: req.dir, Method: req.method,
		Name: req.name, ID: req.id.String(), Seq: req.seq, StartNS: req.time, FirstProgressNS: -1, FirstChunkNS: -1,
		Outcome: outcome, Cancelled: req.cancelled != 0, RequestBytes: req.bytes, ResponseBytes: resp}
	if outcome == OutcomeError {
		o.ErrorCode = code
	}
	if op != nil {
		o.Method, o.Name, o.StartNS = op.method, op.name, op.start
		if op.seq != 0 {
			o.Seq, o.ID = op.seq, op.id.String()
		}
		o.RequestBytes += op.reqBytes
		o.ResponseBytes += op.respBytes
		o.Rounds = op.rounds
		o.Polls = op.polls
		if op.task != "" {
			o.Task, o.Rounds = true, 0
		}
		o.FirstProgressNS = since(op.firstProgress, op.start)
		o.FirstChunkNS = since(op.firstChunk, op.start)
	}
	if o.FirstProgressNS < 0 {
		o.FirstProgressNS = since(req.firstProgress, o.StartNS)
	}
	if o.FirstChunkNS < 0 {
		o.FirstChunkNS = since(req.firstChunk, o.StartNS)
	}
	if end != 0 {
		o.Answered, o.LatencyNS = true, end-o.StartNS
		if o.LatencyNS < 0 { // stamped before the request: a clock step back
			o.LatencyNS = -1
		}
	}
	in.o.onOp(o)
}

// answerOutcome names the outcome of an answer.
func answerOutcome(isErr, toolErr bool) string {
	switch {
	case isErr:
		return OutcomeError
	case toolErr:
		return OutcomeToolError
	}
	return OutcomeOK
}

// emitAbandoned hands the MRTR operation op, never retried, to the
// WithOperations function.
func (in *Inspector) emitAbandoned(op *operation) {
	if in.o.onOp == nil {
		return
	}
	req := &request{sess: op.sess, dir: op.dir, method: op.method, name: op.name, time: op.start}
	in.emitOp(req, op, OutcomeAbandoned, 0, 0, 0)
}

// since returns t - start, or -1 when t is 0 (none).
func since(t, start int64) int64 {
	if t == 0 {
		return -1
	}
	return max(t-start, 0)
}

// firstChunk notes, for the requests still in flight on the HTTP exchange
// of rec (a message from the server), the time of the first message the
// server sent on it. A WebSocket connection, one exchange for a whole
// session, gives its answers no stream of their own: none (as over
// stdio).
func (in *Inspector) firstChunk(rec *tape.Record) {
	for _, e := range in.exchanges[rec.Exchange] {
		if req, ok := in.inflight.Lookup(e.session, tape.ClientToServer, e.id); ok && req.firstChunk == 0 {
			req.firstChunk = rec.Time
		}
	}
}
