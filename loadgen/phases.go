package loadgen

import (
	"fmt"
	"time"
)

// The phases of a run: in the closed model, the setup (from the start
// until the first request is sent: the first session's dial, a stdio
// server's start, the initialize handshake and a scenario's setup steps);
// sending (until no request may be sent any more; sessions that start
// later, over a ramp or because they are slower, are set up during it),
// then the wait for the answers still in flight (each bounded by the
// timeout): the measured duration; then, not measured, the closing of the
// sessions. The open model sets its sessions up before its clock starts:
// it has no setup phase. The rates of the requests sent are over the
// sending; those of the answers over the sending and the wait (vegeta's
// rate and throughput: the measured duration, the setup left out).

// stopSending notes that no request is sent after at: the duration bound,
// an interruption, an abort. The first call wins.
func (r *runner) stopSending(at time.Time) {
	r.sendEnd.CompareAndSwap(0, at.UnixNano())
}

// noteFirstClaim notes a request of the closed model claimed at at, for
// the end of the setup: the earliest one counts.
func (r *runner) noteFirstClaim(at time.Time) {
	v := at.UnixNano()
	for cur := r.firstClaim.Load(); cur == 0 || v < cur; cur = r.firstClaim.Load() {
		if r.firstClaim.CompareAndSwap(cur, v) {
			return
		}
	}
}

// noteClaim notes a request claimed at at, for the end of the sending of
// a run bounded by a request count.
func (r *runner) noteClaim(at time.Time) {
	raiseMax(&r.lastClaim, at.UnixNano())
}

// sendingEnd returns when the run stopped sending, given its measured end:
// its last request when every one WithRequests allows was claimed, else
// the duration bound, an interruption or an abort, whichever came first;
// the end when none did (every session failed, a tape's recordings sent
// in full: their last request).
func (r *runner) sendingEnd(end time.Time) time.Time {
	at := r.sendEnd.Load()
	if last := r.lastClaim.Load(); last != 0 && (at == 0 || (r.o.requests > 0 && r.claims.Load() >= r.o.requests)) {
		at = last
	}
	if bound := r.start.Add(r.o.duration); at == 0 && r.o.duration > 0 && !end.Before(bound) {
		at = bound.UnixNano() // the open model's schedule ran out without a claim refused
	}
	if at == 0 {
		return end
	}
	return clampTime(time.Unix(0, at), r.start, end)
}

// clampTime returns t within [lo, hi].
func clampTime(t, lo, hi time.Time) time.Time {
	if t.Before(lo) {
		t = lo
	}
	if t.After(hi) {
		t = hi
	}
	return t
}

// setPhases sets the setup, the sending, the wait and the closing of a
// report whose measured phase ended at end, its sessions closed at closed.
func (rep *Report) setPhases(r *runner, end, closed time.Time) {
	// wall clock: Unix nanoseconds
	send := min(max(r.sendingEnd(end).Round(0).Sub(r.start.Round(0)), 0), end.Sub(r.start))
	if first := r.firstClaim.Load(); first != 0 {
		rep.Setup = min(max(time.Unix(0, first).Sub(r.start.Round(0)), 0), send)
	}
	rep.setSpans(send, end.Sub(r.start))
	rep.Closing = max(closed.Sub(end), 0)
}

// setSpans sets Sending and Wait, Setup being set, from the end of the
// sending and the measured duration, both since the start.
func (rep *Report) setSpans(sendEnd, dur time.Duration) {
	rep.Sending = max(sendEnd-rep.Setup, 0)
	rep.Wait = max(dur-rep.Setup-rep.Sending, 0)
}

// SendingTime is how long requests were sent: Sending, or for a report
// written before it was recorded (no phases: Sending and Setup 0), the
// whole Duration. A run whose only request was sent as its setup ended
// (Setup set, Sending 0) sent for no measurable time: 0.
func (rep *Report) SendingTime() time.Duration {
	if rep.Sending > 0 || rep.Setup > 0 {
		return rep.Sending
	}
	return rep.Duration
}

// AnswerTime is how long answers could come: the measured duration after
// the setup (Sending + Wait; Duration for a report without a setup). The
// answers per second, and each series' rate, are over it.
func (rep *Report) AnswerTime() time.Duration {
	return max(rep.Duration-rep.Setup, 0)
}

// mergePhases sets the phases of a merge of reports: the setup spans the
// earliest start to the earliest first request, the sending from there to
// the latest end of a sending, the wait what follows to the latest end;
// the closing is the longest.
func (out *Report) mergePhases(reports []*Report) {
	var sendStart, sendEnd time.Time
	for _, r := range reports {
		s := r.Started.Add(r.Setup)
		if sendStart.IsZero() || s.Before(sendStart) {
			sendStart = s
		}
		if e := s.Add(r.SendingTime()); e.After(sendEnd) {
			sendEnd = e
		}
		out.Closing = max(out.Closing, r.Closing)
	}
	end := min(max(sendEnd.Sub(out.Started), 0), out.Duration)
	out.Setup = min(max(sendStart.Sub(out.Started), 0), end)
	out.setSpans(end, out.Duration)
}

// PhaseText says where the time of the run went: "3.512s: 500ms setting
// up, 3s sending, 12ms waiting for the answers in flight; then 2.01s
// closing the sessions" (no setup in the open model, whose sessions are
// set up before its clock starts); the duration alone for a report
// without phases.
func (rep *Report) PhaseText() string {
	s := rep.Duration.Round(time.Millisecond).String()
	if rep.Sending <= 0 && rep.Setup <= 0 {
		return s
	}
	s += ": "
	if rep.Setup > 0 {
		s += dur3(rep.Setup) + " setting up, "
	}
	s += fmt.Sprintf("%s sending, %s waiting for the answers in flight", dur3(rep.Sending), dur3(rep.Wait))
	if rep.Closing > 0 {
		s += fmt.Sprintf("; then %s closing the sessions (not measured)", dur3(rep.Closing))
	}
	return s
}
