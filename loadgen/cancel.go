package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/mcptape/mcptape/transport"
)

// CancelQuietWindow is how long, at most, a cancelled request is watched
// after its cancellation for frames the server still sends for it (its
// answer, progress): the time to the last of them is the "cancel to quiet"
// series. The run's timeout bounds it too.
const CancelQuietWindow = time.Second

// cancelSuffix names the series of times from a cancellation to the last
// frame the server sent for the cancelled request.
const cancelSuffix = " cancel to quiet"

// CancelReport counts the cancellations (WithCancel).
type CancelReport struct {
	// Chosen is the number of calls picked for cancellation; Sent the
	// cancellations made (the others were answered before their time).
	Chosen int64 `json:"chosen"`
	Sent   int64 `json:"sent"`
	// AnsweredAnyway counts cancelled calls the server answered after the
	// cancellation.
	AnsweredAnyway int64 `json:"answered_anyway"`
	// Quiet counts cancelled calls after which the server sent nothing
	// more for that request.
	Quiet int64 `json:"quiet"`
}

// cancelStats are the running counts behind CancelReport.
type cancelStats struct{ chosen, sent, answered, quiet int64 }

// pickCancel reports whether the next call is to be cancelled: a share
// ratio of the calls, spread evenly.
func (r *runner) pickCancel() bool {
	if r.o.cancelRatio <= 0 {
		return false
	}
	n := r.cancelSeq.Add(1)
	return int64(float64(n)*r.o.cancelRatio) > int64(float64(n-1)*r.o.cancelRatio)
}

// cancelRoundTrip sends a request, and unless it is answered within the
// cancel delay, cancels it the way the transport and version call for:
// notifications/cancelled over stdio; over 2025-era HTTP the notification
// then closing the response stream; over 2026-07-28 closing the stream.
// The delay runs from the send; the cancellation never leaves before the
// call's request has been written on its connection (landed), and over
// HTTP not before its answer's headers came or transport.LandGrace
// passed since that write. It then watches the request for up to
// CancelQuietWindow. It returns the answer when one came before the
// cancellation; otherwise errCancelled and when the call was cancelled,
// which is when it ended for its results line; or, when the call failed
// before, why (counted already).
func (s *session) cancelRoundTrip(ctx context.Context, conn transport.Conn, id int64, frame []byte, c *call) (reply, time.Time, error) {
	st := s.r.st
	st.add(&st.cancel.chosen, 1)
	s.register(conn, c, id)
	sctx, stop := context.WithTimeout(ctx, s.r.o.timeout)
	defer stop()
	// The send runs on its own: over HTTP it may wait for the answer's
	// headers, which a server may hold back until the call ends, and the
	// cancellation must not wait for that. Ending streamCtx closes the
	// request's response stream (or aborts the request).
	streamCtx, closeStream := context.WithCancel(sctx)
	defer closeStream()
	sent := make(chan error, 1)
	l := transport.NewLanding()
	frame = bytes.Clone(frame) // the caller reuses its buffer once we return
	go func() {
		_, err := conn.Send(streamCtx, frame, transport.SendOptions{Written: l.Wrote})
		l.Sent()
		sent <- err
	}()
	delay := time.NewTimer(s.r.o.cancelAfter)
	defer delay.Stop()
	landed := l.Landed() // nil once closed
	due := false
	for !due || landed != nil {
		select {
		case rep := <-c.done:
			if rep.err != nil {
				return reply{}, time.Time{}, s.countErr(sctx, c.names, conn, rep.err)
			}
			return rep, time.Time{}, nil
		case err := <-sent:
			if err != nil {
				s.forget(id)
				return reply{}, time.Time{}, s.countErr(sctx, c.names, conn, err)
			}
			sent = nil
		case <-landed:
			landed = nil
		case <-sctx.Done():
			s.forget(id)
			return reply{}, time.Time{}, s.countErr(sctx, c.names, conn, sctx.Err())
		case <-delay.C:
			due = true
		}
	}
	at := time.Now()
	if !stateless(s.r.o.version) || s.r.target.URL == "" {
		note := fmt.Appendf(nil, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"mcptape load --cancel-after"}}`, id)
		if _, err := conn.Send(sctx, note, transport.SendOptions{}); err != nil {
			s.countErr(sctx, nil, conn, err)
		}
	}
	if s.r.target.URL != "" {
		closeStream()
	}
	st.add(&st.cancel.sent, 1)
	// the session goes on: the watch runs on its own (a failed call is
	// never recycled), and the run waits for it before its report
	s.r.watchers.Add(1)
	go func() {
		defer s.r.watchers.Done()
		s.watchCancelled(id, c, at)
	}()
	return reply{}, at, errCancelled
}

// watchCancelled watches call c, cancelled at at, for up to
// CancelQuietWindow for frames the server still sends for it, and counts
// what came: its answer, the time to the last frame, or none (quiet). It
// stops early when the run is interrupted or aborted.
func (s *session) watchCancelled(id int64, c *call, at time.Time) {
	st := s.r.st
	wait := time.NewTimer(min(CancelQuietWindow, s.r.o.timeout))
	defer wait.Stop()
	var last time.Time
	answered := false
	select {
	case rep := <-c.done:
		answered, last = rep.err == nil, rep.at
	case <-wait.C:
	case <-s.r.work.Done():
	case <-s.r.aborted:
	}
	s.forget(id)
	s.mu.Lock()
	for _, t := range []time.Time{c.lastAt, c.stream.last} { // progress, parts of a streamed answer
		if t.After(last) {
			last = t
		}
	}
	s.mu.Unlock()
	names := c.tmpl.series
	if last.After(at) {
		st.record([]string{names[len(names)-1] + cancelSuffix}, last.Sub(at))
	} else {
		st.add(&st.cancel.quiet, 1)
	}
	if answered {
		st.add(&st.cancel.answered, 1)
	}
}
