package analysis

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// problemDetails bounds the detail lines of one problem.
const problemDetails = 3

// Finish ends the inspection and returns the report. warning is the tape
// reader's warning (nil for a clean tape). Call it once, after the last
// Add.
func (in *Inspector) Finish(warning error) *Report {
	rep := &in.rep
	t := &rep.Tape
	t.OriginNS, t.FirstNS, t.LastNS, t.Records = in.origin, in.first, in.last, in.records
	t.DurationNS = in.last - in.first
	var te *tape.TailError
	switch {
	case errors.As(warning, &te): // the report names the file already
		t.Warning = fmt.Sprintf("tape cut after %s: %v", english.Count(te.Records, "record"), te.Err)
	case warning != nil:
		t.Warning = warning.Error()
	}
	in.finishPending()
	in.finishHandshakes()
	rep.Sessions = make([]SessionReport, 0, len(in.order))
	for _, s := range in.order {
		rep.Sessions = append(rep.Sessions, s.report())
	}
	rep.SessionsFolded = in.folded
	rep.FoldedSessions = in.foldedReport()

	rep.Latency = make([]LatencyStats, 0, len(in.methods))
	for k, m := range in.methods {
		rep.Latency = append(rep.Latency, LatencyStats{Dir: string(k.dir), Method: k.method, Errors: m.errors, Latency: m.lat.summary()})
	}
	slices.SortFunc(rep.Latency, func(a, b LatencyStats) int {
		return cmp.Or(cmp.Compare(b.P99NS, a.P99NS), cmp.Compare(a.Dir, b.Dir), cmp.Compare(a.Method, b.Method))
	})
	rep.Tools = make([]ToolStats, 0, len(in.tools))
	for name, ts := range in.tools {
		rep.Tools = append(rep.Tools, ToolStats{Name: name, Calls: ts.lat.n + ts.lat.unknown, Errors: ts.errors, ToolErrors: ts.toolErrors, Latency: ts.lat.summary()})
	}
	slices.SortFunc(rep.Tools, func(a, b ToolStats) int {
		return cmp.Or(cmp.Compare(b.P99NS, a.P99NS), cmp.Compare(a.Name, b.Name))
	})
	rep.Errors = make([]ErrorCount, 0, len(in.errs))
	for _, e := range in.errs {
		rep.Errors = append(rep.Errors, *e)
	}
	slices.SortFunc(rep.Errors, func(a, b ErrorCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Code, b.Code), cmp.Compare(a.Message, b.Message))
	})
	rep.Progress.FirstProgress = in.firstProgress.summary()
	rep.Operations.MRTR.Latency = in.mrtrLat.summary()
	rep.Operations.Tasks.Latency = in.taskLat.summary()
	rep.Streams = in.streamReport()
	rep.Violations = in.viol.list()
	rep.Problems = in.problems(rep)
	return rep
}

// finishPending sorts out what is still in flight at the end of the tape.
func (in *Inspector) finishPending() {
	rep := &in.rep
	var pending []RequestRef // never answered
	for _, p := range in.inflight.Pending() {
		req := p.Value
		if req.cancelled != 0 {
			rep.Cancellations.NotAnswered++
			rep.Unanswered.Cancelled++
			in.unansweredDir(req)
			in.emitOp(req, req.op, OutcomeCancelled, 0, 0, 0)
			continue
		}
		// Its session's close ended it; but a streamed answer the server
		// had started and not ended stays the server's unfinished stream
		// (streamUnfinished), though the client left afterwards. Records
		// missing between the request and that close (or the tape's end)
		// may have held its answer: unknown (lostInGap).
		s := req.sess
		closed := s.closeOutcome != "" && req.time <= s.closedAt && (s.closeOutcome != OutcomeClientGone || req.chunks == 0)
		if in.lostInGap(req, closed) {
			in.cut(req, OutcomeLostInGap, 0)
			in.emitOp(req, req.op, OutcomeLostInGap, 0, 0, 0)
			continue
		}
		if closed {
			in.cut(req, s.closeOutcome, 0)
			in.emitOp(req, req.op, s.closeOutcome, 0, 0, 0)
			continue
		}
		in.emitOp(req, req.op, OutcomeUnanswered, 0, 0, 0)
		if in.streamUnfinished(req) {
			continue
		}
		rep.Unanswered.Count++
		in.unansweredDir(req)
		req.sess.unanswered++
		pending = append(pending, in.ref(req))
	}
	// The superseded requests (in.unanswered) are in their sessions'
	// details already.
	in.unanswered = append(in.unanswered, in.firstRefs(pending, unansweredDetails)...)
	slices.SortFunc(in.unanswered, func(a, b RequestRef) int { return cmp.Compare(a.Seq, b.Seq) })
	rep.Unanswered.Requests = in.unanswered[:min(len(in.unanswered), in.o.maxListed)]
	if rep.Unanswered.Requests == nil {
		rep.Unanswered.Requests = []RequestRef{}
	}
	in.finishAbandoned()
	in.finishTasks()
	bySeq := func(a, b RequestRef) int { return cmp.Compare(a.Seq, b.Seq) }
	for _, s := range in.order { // lists kept in two goes
		if d := s.details; d != nil {
			slices.SortFunc(d.Unanswered, bySeq)
			slices.SortFunc(d.Abandoned, bySeq)
		}
	}
}

// finishAbandoned counts the MRTR operations never retried (in.mrtr)
// abandoned, after those abandoned before (in.abandoned), and lists the
// first of them by their first round's request.
func (in *Inspector) finishAbandoned() {
	var ops []*operation
	for _, l := range in.mrtr {
		ops = append(ops, l...)
	}
	slices.SortFunc(ops, func(a, b *operation) int { return cmp.Compare(a.seq, b.seq) })
	for _, op := range ops {
		in.abandoned = append(in.abandoned, in.abandon(op))
	}
	slices.SortFunc(in.abandoned, func(a, b RequestRef) int { return cmp.Compare(a.Seq, b.Seq) })
	in.rep.Operations.MRTR.AbandonedRequests = in.abandoned[:min(len(in.abandoned), in.o.maxListed)]
}

// finishTasks ends the tasks seen terminal by a poll only and counts
// those never finished, in the tape and in their sessions. Tasks are
// keyed by session and task id: an id a server reused in another session
// is another task.
func (in *Inspector) finishTasks() {
	tasks := make([]*operation, 0, len(in.tasks))
	for _, op := range in.tasks {
		tasks = append(tasks, op)
	}
	slices.SortFunc(tasks, func(a, b *operation) int { return cmp.Compare(a.task, b.task) })
	t := &in.rep.Operations.Tasks
	var unfinished []RequestRef
	for _, op := range tasks {
		if op.terminal != 0 { // ended by tasks/get; no tasks/result fetched
			in.endTask(op, op.terminal, false, op.failed && op.method == mToolsCall, 0, 0)
			continue
		}
		t.Unfinished++
		op.sess.unfinished++
		if op.req != nil {
			unfinished = append(unfinished, in.ref(op.req))
		}
		in.emitOp(op.req, op, OutcomeUnfinished, 0, 0, 0)
	}
	t.UnfinishedRequests = in.firstRefs(unfinished, unfinishedDetails)
}

// firstRefs sorts refs by record, keeps each in its session's details
// in the list pick (keepDetail) and returns the first of them, as many
// as are listed.
func (in *Inspector) firstRefs(refs []RequestRef, pick detailList[RequestRef]) []RequestRef {
	slices.SortFunc(refs, func(a, b RequestRef) int { return cmp.Compare(a.Seq, b.Seq) })
	for _, r := range refs {
		keepDetail(in, in.sessions[r.Session], pick, func() RequestRef { return r })
	}
	return refs[:min(len(refs), in.o.maxListed)]
}

// exampleDetails returns the detail lines of a problem's examples.
func exampleDetails(examples []Example) []string {
	var d []string
	for _, ex := range examples {
		d = append(d, fmt.Sprintf("#%d %s [%s] %s", ex.Seq, offset(ex.OffsetNS), clip(ex.Session, 12), ex.Detail))
	}
	return d
}

// lostInGap reports whether records are missing (a gap marker: a tape of
// a rotated recording missing or damaged, records a recorder lost to a
// write error) after req was sent, before the close of its session when
// that close ended it (closed), else before the end of the tape: its
// answer may be among them.
func (in *Inspector) lostInGap(req *request, closed bool) bool {
	i, _ := slices.BinarySearch(in.gaps, req.seq)
	if i == len(in.gaps) {
		return false
	}
	return !closed || in.gaps[i] < req.sess.closedSeq
}

// foldedReport sums the folded sessions (Report.FoldedSessions); nil when
// none is.
func (in *Inspector) foldedReport() *SessionReport {
	if in.folded == 0 {
		return nil
	}
	sum := &sessionState{tools: in.foldedTools, first: in.last, last: in.first}
	var longest int64
	for _, s := range in.sessions {
		if !s.folded {
			continue
		}
		sum.first, sum.last = min(sum.first, s.first), max(sum.last, s.last)
		longest = max(longest, s.last-s.first)
		if v := s.version; v != "" && (sum.version == "" || v < sum.version) {
			sum.version = v
		}
		sum.messages += s.messages
		for i, n := range s.byKind {
			sum.byKind[i] += n
		}
		for i, n := range s.byDir {
			sum.byDir[i] += n
		}
		sum.stderrLines += s.stderrLines
		sum.violations += s.violations
		sum.unanswered += s.unanswered
		sum.errors += s.errors
		sum.toolErrors += s.toolErrors
		sum.cancelled += s.cancelled
		sum.refused += s.refused
		sum.brokenOff += s.brokenOff
		sum.refusedNotes += s.refusedNotes
		sum.abandoned += s.abandoned
		sum.unfinished += s.unfinished
		for rule, n := range s.violationRules {
			if sum.violationRules == nil {
				sum.violationRules = map[string]int64{}
			}
			sum.violationRules[rule] += n
		}
		if s.maxLatency > sum.maxLatency || s.maxLatency == sum.maxLatency && s.slowest < sum.slowest {
			sum.maxLatency, sum.slowest = s.maxLatency, s.slowest
		}
	}
	r := sum.report()
	r.DurationNS = longest
	return &r
}

// report renders a session's state.
func (s *sessionState) report() SessionReport {
	r := SessionReport{ID: s.id, FirstNS: s.first, LastNS: s.last, DurationNS: s.last - s.first,
		Client: s.client, Server: s.server, ProtocolVersion: s.version, RequestedVersion: s.requested,
		Messages: s.messages, ByKind: map[string]int64{}, ByDir: map[string]int64{},
		Exit: s.exit, ClosedBy: s.closedBy, Violations: s.violations, Unanswered: s.unanswered, Errors: s.errors,
		ToolErrors: s.toolErrors, Cancelled: s.cancelled, Refused: s.refused, RefusedNotifications: s.refusedNotes, BrokenOff: s.brokenOff, Details: s.details,
		Abandoned: s.abandoned, Unfinished: s.unfinished, MaxLatencyNS: s.maxLatency, Slowest: s.slowest}
	for k, n := range s.byKind {
		if n > 0 {
			r.ByKind[jsonrpc.Kind(k).String()] = n
		}
	}
	for i, name := range [...]string{string(tape.ClientToServer), string(tape.ServerToClient), "other"} {
		if s.byDir[i] > 0 {
			r.ByDir[name] = s.byDir[i]
		}
	}
	r.ByMethod = make([]MethodCount, 0, len(s.counts))
	for k, n := range s.counts {
		r.ByMethod = append(r.ByMethod, MethodCount{Dir: string(k.dir), Kind: k.kind.String(), Method: k.method, Count: *n})
	}
	slices.SortFunc(r.ByMethod, func(a, b MethodCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Method, b.Method), cmp.Compare(a.Dir, b.Dir), cmp.Compare(a.Kind, b.Kind))
	})
	for name, n := range s.tools {
		r.ToolsCalled = append(r.ToolsCalled, NameCount{Name: name, Count: *n})
	}
	sortNameCounts(r.ToolsCalled)
	for rule, n := range s.violationRules {
		r.ViolationRules = append(r.ViolationRules, NameCount{Name: rule, Count: n})
	}
	sortNameCounts(r.ViolationRules)
	if s.stderrLines > 0 {
		r.Stderr = &StderrInfo{Lines: s.stderrLines, Last: s.stderr}
	}
	return r
}

// sortNameCounts sorts c by count, most first, then by name.
func sortNameCounts(c []NameCount) {
	slices.SortFunc(c, func(a, b NameCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Name, b.Name))
	})
}

// problems lists what went wrong, worst first.
func (in *Inspector) problems(rep *Report) []Problem {
	var out []Problem
	add := func(sev Severity, what string, n int64, details []string, format string, a ...any) {
		out = append(out, Problem{Severity: sev, What: what, Count: n, Summary: fmt.Sprintf(format, a...), Details: details})
	}
	for _, v := range rep.Violations {
		add(v.Severity, v.Rule, v.Count, exampleDetails(v.Examples), "%s ×%d  %s", v.Rule, v.Count, v.Text)
	}
	if u := rep.Unanswered; u.Count > 0 {
		add(SeverityError, "unanswered", u.Count, refDetails(u.Requests), "%s never answered", english.Count(u.Count, "request"))
	}
	if u := rep.Unanswered; u.BrokenOff > 0 {
		add(SeverityError, "broken-off", u.BrokenOff, refDetails(u.BrokenOffRequests), "%s not answered: the server's response or connection broke off, or the server ended the session",
			english.Count(u.BrokenOff, "request"))
	}
	if u := rep.Unanswered; u.CutByShutdown > 0 {
		add(SeverityWarning, "cut-by-shutdown", u.CutByShutdown, refDetails(u.CutByShutdownRequests), "%s cut by the recorder's shutdown before the server answered (not the server's doing)",
			english.Count(u.CutByShutdown, "request"))
	}
	if t := rep.Tape; t.ClockSteps > 0 {
		add(SeverityWarning, "clock-step", t.ClockSteps, exampleDetails(t.ClockStepExamples), "%s stamped before the request it answers (the recorder's clock stepped back): latency unknown, left out of the latency figures",
			english.Count(t.ClockSteps, "answer"))
	}
	if u := rep.Unanswered; u.LostInGap > 0 {
		add(SeverityWarning, "lost-in-gap", u.LostInGap, refDetails(u.LostInGapRequests), "%s with no answer in the tape, sent before records it is missing (a tape of the recording missing or damaged): the answer is unknown",
			english.Count(u.LostInGap, "request"))
	}
	if u := rep.Unanswered; u.ClientGone > 0 {
		add(SeverityWarning, "client-gone", u.ClientGone, refDetails(u.ClientGoneRequests), "%s in flight when the client ended the session, then not answered (the client left; not the server's doing)",
			english.Count(u.ClientGone, "request"))
	}
	var exits []string
	for _, s := range rep.Sessions {
		if e := s.Exit; e != nil && (e.Code != 0 || e.Signal != "") {
			exits = append(exits, fmt.Sprintf("[%s] %s", clip(s.ID, 12), describeExit(e)))
		}
	}
	if len(exits) > 0 {
		add(SeverityError, "server-exit", int64(len(exits)), exits[:min(len(exits), problemDetails)], "server exited abnormally in %s", english.Count(int64(len(exits)), "session"))
	}
	if rep.ProxyErrorsN > 0 {
		var d []string
		for _, ex := range rep.ProxyErrors[:min(len(rep.ProxyErrors), problemDetails)] {
			d = append(d, fmt.Sprintf("#%d %s [%s] %s", ex.Seq, offset(ex.OffsetNS), clip(ex.Session, 12), ex.Detail))
		}
		add(SeverityError, "proxy-error", rep.ProxyErrorsN, d, "%s recorded by the proxy", english.Count(rep.ProxyErrorsN, "error"))
	}
	var nErr int64
	var d []string
	for _, e := range rep.Errors {
		nErr += e.Count
		if len(d) < problemDetails {
			d = append(d, describeError(e))
		}
	}
	if nErr > 0 {
		add(SeverityWarning, "error-response", nErr, d, "%s", english.Count(nErr, "error response"))
	}
	var nTool int64
	d = nil
	for _, t := range rep.Tools {
		if t.ToolErrors > 0 {
			nTool += t.ToolErrors
			if len(d) < problemDetails {
				d = append(d, fmt.Sprintf("%s ×%d", t.Name, t.ToolErrors))
			}
		}
	}
	if nTool > 0 {
		add(SeverityWarning, "tool-error", nTool, d, "%s returned isError", english.Count(nTool, "tool call"))
	}
	if n := rep.RefusedUpgradesN; n > 0 {
		d = nil
		for _, ex := range rep.RefusedUpgrades[:min(len(rep.RefusedUpgrades), problemDetails)] {
			d = append(d, fmt.Sprintf("#%d %s %s", ex.Seq, offset(ex.OffsetNS), ex.Detail))
		}
		add(SeverityWarning, "ws-refused", n, d, "%s refused with an HTTP error status", english.Count(n, "WebSocket upgrade"))
	}
	if r := rep.Refused; r.Count > r.Unauthorized || r.Notifications > 0 {
		d = nil
		for _, ref := range r.Requests {
			if ref.Status != 401 && len(d) < problemDetails {
				d = append(d, describeRef(ref))
			}
		}
		d = append(d, refDetails(r.NotificationRefs[:min(len(r.NotificationRefs), problemDetails-len(d))])...)
		n := r.Count - r.Unauthorized
		var what []string
		if n > 0 {
			what = append(what, english.Count(n, "request"))
		}
		if r.Notifications > 0 {
			what = append(what, english.Count(r.Notifications, "notification"))
		}
		add(SeverityWarning, "http-refused", n+r.Notifications, d, "%s refused with an HTTP error status", strings.Join(what, " and "))
	}
	if n := rep.Refused.Unauthorized; n > 0 { // the start of an OAuth flow
		add(SeverityInfo, "http-unauthorized", n, nil, "%s answered 401 (authorization required)", english.Count(n, "request"))
	}
	if c := rep.Cancellations; c.AnsweredAnyway > 0 {
		add(SeverityWarning, "answered-after-cancel", c.AnsweredAnyway, refDetails(c.Answered), "%s answered after being cancelled", english.Count(c.AnsweredAnyway, "request"))
	}
	if n := rep.Operations.MRTR.Abandoned; n > 0 {
		add(SeverityWarning, "mrtr-abandoned", n, nil, "%s asked for input and never retried", english.Count(n, "MRTR operation"))
	}
	if st := rep.Streams; st != nil && st.Unfinished > 0 {
		add(SeverityError, "stream-unfinished", st.Unfinished, refDetails(st.UnfinishedRequests), "%s cut before the end part", english.Count(st.Unfinished, "streamed answer"))
	}
	if n := rep.Operations.Tasks.Unfinished; n > 0 {
		add(SeverityWarning, "task-unfinished", n, nil, "%s never reached a terminal status", english.Count(n, "task"))
	}
	slices.SortStableFunc(out, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(b.Severity, a.Severity), cmp.Compare(b.Count, a.Count))
	})
	if rep.Tape.Warning != "" { // the tape itself first: every figure below is partial
		out = slices.Insert(out, 0, Problem{Severity: SeverityError, What: "tape-damaged", Count: 1,
			Summary: rep.Tape.Warning, Details: []string{"every figure below covers the records before the damage"}})
	}
	if out == nil {
		out = []Problem{}
	}
	return out
}

// refDetails describes the first requests of refs for a problem's details.
func refDetails(refs []RequestRef) []string {
	var d []string
	for _, r := range refs[:min(len(refs), problemDetails)] {
		d = append(d, describeRef(r))
	}
	return d
}

func describeRef(r RequestRef) string {
	s := fmt.Sprintf("#%d %s [%s] %s %s", r.Seq, offset(r.OffsetNS), clip(r.Session, 12), arrow(r.Dir), r.Method)
	if r.ID != "" { // a notification has none
		s += " id " + clip(r.ID, 20)
	}
	if r.Name != "" {
		s += " (" + clip(r.Name, 30) + ")"
	}
	if r.Status != 0 {
		s += fmt.Sprintf(": HTTP %d", r.Status)
	}
	return s
}

func describeError(e ErrorCount) string {
	s := fmt.Sprintf("%d %s ×%d", e.Code, e.Message, e.Count)
	if e.Method != "" {
		s += " (" + e.Method + ")"
	}
	return s
}

func describeExit(e *ExitInfo) string {
	if e.Signal != "" {
		return "killed by " + e.Signal
	}
	return fmt.Sprintf("exit code %d", e.Code)
}

// arrow shows a direction: "→" client to server, "←" server to client.
func arrow(dir string) string {
	switch tape.Direction(dir) {
	case tape.ClientToServer:
		return "→"
	case tape.ServerToClient:
		return "←"
	}
	return "·"
}
