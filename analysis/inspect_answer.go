package analysis

// The inspector's handling of answers: a response or an error response
// paired with its request, the outcome and latency of the operation it
// ends, the handshake it completes, the error it counts.

import (
	"fmt"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// response handles a response or an error response.
func (in *Inspector) response(it *Item, s *sessionState) {
	rec, info, frame := it.Rec, &it.Info, it.Frame
	isErr := info.Kind == jsonrpc.KindError
	part := streamPartOf(it)
	if part == jsonrpc.PartStart || part == jsonrpc.PartDelta {
		in.streamChunk(it, s)
		return
	}
	var req *request
	ok := false
	if Pairable(info.ID) {
		if fs := it.fields; fs != nil && fs.idInt {
			dir := Opposite(rec.Dir)
			req, ok = in.inflight.closeInt(s.pairs(dir), rec.Session, dir, fs.idNum)
		} else {
			req, ok = in.inflight.Close(rec.Session, Opposite(rec.Dir), info.ID)
		}
		if !ok {
			in.unpairedPart(it, s, part)
		}
	} else if isErr && info.ID.Type == jsonrpc.IDNull {
		req, ok = in.nullIDAnswer(it)
	}
	method := ""
	var answered *request
	if ok {
		method, answered = req.method, req
	}
	s.count(rec.Dir, info.Kind, method)
	if isErr {
		s.errors++
		in.countError(it, s, answered, method)
		if in.live != nil {
			msg, _ := lookupString(frame, "error", "message")
			in.flag(it, "error-response", fmt.Sprintf("%d %s (%s)", info.ErrorCode, msg, or(method, "unpaired")))
		}
	}
	if !ok {
		return
	}
	if part == jsonrpc.PartEnd || req.chunks > 0 {
		in.streamEnd(it, s, req, part)
	}
	in.buf = tokenKey(in.buf[:0], rec.Session, req.dir, info.ID)
	in.answeredIDs.add(string(in.buf))
	// A task keeps its progress token until it ends; anything else is
	// done with it now.
	if keepToken := in.answered(it, s, req); !keepToken {
		in.release(req)
		in.recycle(req)
	}
}

// answered handles the response it to the request req, which it took out
// of flight, and reports whether req is to be kept (for its task).
func (in *Inspector) answered(it *Item, s *sessionState, req *request) (keepToken bool) {
	rec, frame, method := it.Rec, it.Frame, req.method
	isErr := it.Info.Kind == jsonrpc.KindError
	if req.cancelled != 0 {
		in.rep.Cancellations.AnsweredAnyway++
		if len(in.rep.Cancellations.Answered) < in.o.maxListed {
			in.rep.Cancellations.Answered = append(in.rep.Cancellations.Answered, in.ref(req))
		}
	}
	if method == mToolsList && !isErr {
		in.learnToolHeaders(frame)
	}
	var f []span
	if !isErr && (mrtrMethod(method) || method == mInitialize || method == mDiscover || req.wantsTask || req.taskPollingOf != nil) {
		f = payloadFields(it, "result", resultKeys, in.rf[:])
	}
	resultType := ""
	if f != nil {
		resultType, _ = stringValue(f[rResultType].of(frame))
		switch method {
		case mInitialize, mDiscover:
			in.handshake(frame, f, s, method)
		case mTasksGet, mTasksCancel:
			if op := req.taskPollingOf; op != nil {
				if st, _ := stringValue(f[rStatus].of(frame)); st == "completed" || st == "failed" || st == "cancelled" {
					if op.terminal == 0 {
						op.terminal = rec.Time
					}
					op.failed = st != "completed"
				}
			}
		}
	}
	if resultType == resultInputRequired && mrtrMethod(method) {
		op := req.op
		if op == nil {
			op = &operation{start: req.time, dir: req.dir, method: method, name: req.name, rounds: 1, sess: s, seq: req.seq, id: req.id}
		}
		op.reqBytes += req.bytes
		op.respBytes += int64(len(frame))
		if op.firstProgress == 0 {
			op.firstProgress = req.firstProgress
		}
		if op.firstChunk == 0 {
			op.firstChunk = req.firstChunk
		}
		in.waitRetry(opKey{opScope(s, rec), req.dir, method, req.name}, op)
		return false // the operation goes on with a retry
	}
	if f != nil && (req.wantsTask || resultType == resultTask) {
		id, found := lookupString(f[rTask].of(frame), "taskId")
		if !found {
			id, found = stringValue(f[rTaskID].of(frame))
		}
		if found {
			in.rep.Operations.Tasks.Tasks++
			k := taskKey(opScope(s, rec), id)
			in.tasks[k] = &operation{start: req.time, dir: req.dir, method: method, name: req.name, sess: s, task: k, req: req, respBytes: int64(len(frame))}
			return true // timed when the task ends
		}
	}
	toolResult := method == mToolsCall || (method == mTasksResult && req.taskPollingOf != nil && req.taskPollingOf.method == mToolsCall)
	toolErr := f != nil && toolResult && string(f[rIsError].of(frame)) == "true"
	if toolErr && in.live != nil {
		in.flag(it, "tool-error", req.name+" returned isError")
	}
	if op := req.taskPollingOf; op != nil && method == mTasksResult {
		in.endTask(op, rec.Time, isErr, toolErr, int64(len(frame)), it.Info.ErrorCode)
	}
	start := req.time
	if op := req.op; op != nil {
		start = op.start
		in.rep.Operations.MRTR.Operations++
		in.rep.Operations.MRTR.Rounds += op.rounds
		in.rep.Operations.MRTR.MaxRounds = max(in.rep.Operations.MRTR.MaxRounds, op.rounds)
		in.mrtrLat.record(rec.Time - start)
	}
	if rec.Time < start {
		in.clockStep(it, req, start)
	}
	in.sample(req.dir, method, req.name, rec.Time-start, isErr, toolErr)
	req.sess.outcome(req.dir, method, req.name, rec.Time-start, toolErr)
	in.emitOp(req, req.op, answerOutcome(isErr, toolErr), rec.Time, int64(len(frame)), it.Info.ErrorCode)
	return false
}

// clockStep notes the answer it stamped before the start of its request
// req's operation (start): the recorder's clock stepped back.
func (in *Inspector) clockStep(it *Item, req *request, start int64) {
	t := &in.rep.Tape
	t.ClockSteps++
	if len(t.ClockStepExamples) < in.o.maxListed {
		t.ClockStepExamples = append(t.ClockStepExamples, Example{Session: it.Rec.Session, Seq: it.Seq, OffsetNS: it.Rec.Time - in.origin,
			Detail: fmt.Sprintf("answer to #%d (%s id %s) stamped %s before it", req.seq, req.method, clip(req.id.String(), 60), fmtDur(start-it.Rec.Time))})
	}
}

// outcome counts an answered operation of the session: its tool error and
// latency.
func (s *sessionState) outcome(dir tape.Direction, method, name string, ns int64, toolErr bool) {
	if toolErr {
		s.toolErrors++
	}
	if dir == tape.ClientToServer && ns > s.maxLatency {
		s.maxLatency, s.slowest = ns, method
		if method == mToolsCall {
			s.slowest = method + " " + name
		}
	}
}

// sample records the latency and outcome of one operation.
func (in *Inspector) sample(dir tape.Direction, method, name string, ns int64, isErr, toolErr bool) {
	k := methodKey{dir, method}
	m, ok := in.hotMethods.get(k)
	if !ok {
		if m = in.methods[k]; m == nil {
			m = &methodStat{}
			in.methods[k] = m
		}
		in.hotMethods.put(k, m)
	}
	m.lat.record(ns)
	if isErr {
		m.errors++
	}
	if method != mToolsCall {
		return
	}
	t, ok := in.hotTools.get(name)
	if !ok {
		if t = in.tools[name]; t == nil {
			t = &toolStat{}
			in.tools[name] = t
		}
		in.hotTools.put(name, t)
	}
	t.lat.record(ns)
	if isErr {
		t.errors++
	}
	if toolErr {
		t.toolErrors++
	}
}

// endTask times a task from its creating request to its result.
func (in *Inspector) endTask(op *operation, end int64, isErr, toolErr bool, resp, code int64) {
	if in.tasks[op.task] != op {
		return // already ended
	}
	delete(in.tasks, op.task)
	in.emitOp(op.req, op, answerOutcome(isErr, toolErr), end, resp, code)
	in.release(op.req)
	in.recycle(op.req)
	op.req = nil
	in.rep.Operations.Tasks.Completed++
	in.taskLat.record(end - op.start)
	in.sample(op.dir, op.method, op.name, end-op.start, isErr, toolErr)
	op.sess.outcome(op.dir, op.method, op.name, end-op.start, toolErr)
}

// handshake learns the server and the negotiated version from the result
// fields f of initialize or server/discover.
func (in *Inspector) handshake(frame []byte, f []span, s *sessionState, method string) {
	if p := peerAt(f[rServerInfo].of(frame)); p != nil {
		s.server = p
	} else if p := peerAt(f[rMeta].of(frame), metaServerInfo); p != nil {
		s.server = p
	}
	if method == mInitialize {
		if v, ok := stringValue(f[rProtocolVersion].of(frame)); ok {
			s.version = v
		}
	}
}

// countError counts the error response of it (in session s) by code and
// message, and lists it among the first ones of the tape and of s; req is
// the request it answers, nil when it pairs with none.
func (in *Inspector) countError(it *Item, s *sessionState, req *request, method string) {
	info := &it.Info
	msg, _ := lookupString(it.Frame, "error", "message")
	k := errKey{code: info.ErrorCode, message: clip(msg, 120)}
	resp := func() ErrorResponse {
		e := ErrorResponse{Response: it.Seq, Code: info.ErrorCode, Message: k.message}
		if req != nil {
			e.RequestRef = in.ref(req)
		} else {
			e.RequestRef = RequestRef{Session: it.Rec.Session, Dir: string(Opposite(it.Rec.Dir)), ID: clip(info.ID.String(), 60),
				Seq: it.Seq, OffsetNS: it.Rec.Time - in.origin}
		}
		return e
	}
	if len(in.rep.ErrorResponses) < in.o.maxListed {
		in.rep.ErrorResponses = append(in.rep.ErrorResponses, resp())
	}
	keepDetail(in, s, errorResponseDetails, resp)
	e := in.errs[k]
	if e == nil {
		if len(in.errs) >= in.o.maxDistinct {
			k = errKey{message: Other} // one bucket for every code and message beyond the bound
			e = in.errs[k]
		}
		if e == nil {
			e = &ErrorCount{Code: k.code, Message: k.message, Method: method}
			in.errs[k] = e
		}
	}
	e.Count++
}
