package loadgen

import (
	"fmt"
	"time"
)

// The phases of a run: sending (from the start until no request may be
// sent any more), then the wait for the answers still in flight (each
// bounded by the timeout): the measured duration; then, not measured, the
// closing of the sessions. The rates of the requests sent are over the
// sending; those of the answers over the measured duration (vegeta's rate
// and throughput).

// stopSending notes that no request is sent after at: the duration bound,
// an interruption, an abort. The first call wins.
func (r *runner) stopSending(at time.Time) {
	r.sendEnd.CompareAndSwap(0, at.UnixNano())
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

// setPhases sets the sending, the wait and the closing of a report whose
// measured phase ended at end, its sessions closed at closed.
func (rep *Report) setPhases(r *runner, end, closed time.Time) {
	send := r.sendingEnd(end) // wall clock: Unix nanoseconds
	dur := end.Sub(r.start)
	rep.Sending = min(max(send.Round(0).Sub(r.start.Round(0)), 0), dur)
	rep.Wait = dur - rep.Sending
	rep.Closing = max(closed.Sub(end), 0)
}

// SendingTime is how long requests were sent: Sending, or for a report
// written before it was recorded (0), the whole Duration.
func (rep *Report) SendingTime() time.Duration {
	if rep.Sending > 0 {
		return rep.Sending
	}
	return rep.Duration
}

// mergePhases sets the phases of a merge of reports: the sending spans
// the earliest start to the latest end of a sending, the wait what
// follows to the latest end; the closing is the longest.
func (out *Report) mergePhases(reports []*Report) {
	var sendEnd time.Time
	for _, r := range reports {
		if e := r.Started.Add(r.SendingTime()); e.After(sendEnd) {
			sendEnd = e
		}
		out.Closing = max(out.Closing, r.Closing)
	}
	out.Sending = min(max(sendEnd.Sub(out.Started), 0), out.Duration)
	out.Wait = out.Duration - out.Sending
}

// PhaseText says where the time of the run went: "3.012s: 3s sending,
// 12ms waiting for the answers in flight; then 2.01s closing the
// sessions"; the duration alone for a report without phases.
func (rep *Report) PhaseText() string {
	s := rep.Duration.Round(time.Millisecond).String()
	if rep.Sending <= 0 {
		return s
	}
	s += fmt.Sprintf(": %s sending, %s waiting for the answers in flight", dur3(rep.Sending), dur3(rep.Wait))
	if rep.Closing > 0 {
		s += fmt.Sprintf("; then %s closing the sessions (not measured)", dur3(rep.Closing))
	}
	return s
}
