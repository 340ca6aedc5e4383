package loadgen

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/mcptape/mcptape/transport"
)

// What a run does when the stdio server of a session exits while the run
// goes on (WithOnExit).
const (
	// OnExitStop ends the run: no request starts any more, the report
	// says which server exited and how (Report.Failure). It is the
	// default: a server that dies under load is the finding of the run,
	// and going on would measure something else.
	OnExitStop = "stop"
	// OnExitRestart starts the session's server again (after a back-off,
	// see BackoffMin) and goes on; every exit is counted in
	// Report.ServerExits.
	OnExitRestart = "restart"
)

// exitWait is how long a session waits for a stdio server whose output
// ended, or that stopped reading, to exit, to name its exit status.
const exitWait = time.Second

// WithOnExit sets what the run does when a stdio server exits during the
// run: OnExitStop (the default) or OnExitRestart. In flight requests of
// that session fail at once either way, with *ServerExitError.
func WithOnExit(policy string) Option {
	return func(o *options) error {
		if policy != OnExitStop && policy != OnExitRestart {
			return fmt.Errorf("on exit %q: want %s or %s", policy, OnExitStop, OnExitRestart)
		}
		o.onExit = policy
		return nil
	}
}

// serverGone names why an exchange with a stdio server failed when the server
// closed its output or stopped reading its input: once it has exited (up
// to exitWait), a *ServerExitError with its status. Other errors are
// returned as they are.
func serverGone(conn transport.Conn, err error) error {
	sc, ok := conn.(*transport.StdioConn)
	if !ok || !errors.Is(err, transport.ErrServerClosed) {
		return err
	}
	t := time.NewTimer(exitWait)
	defer t.Stop()
	select {
	case <-sc.Exited():
		return &ServerExitError{Status: exitStatus(sc.ExitStatus()), Err: err}
	case <-t.C:
		return err
	}
}

// lost handles the end of a connection the session did not close (the
// stdio server exited, a legacy SSE stream ended): the requests in flight
// on it fail at once with the reason, the session is set up again on its
// next request, and a stdio server's exit is counted and, under
// OnExitStop, ends the run.
func (s *session) lost(conn transport.Conn, err error) {
	if errors.Is(err, transport.ErrClosed) {
		return // closed by us
	}
	why := serverGone(conn, err)
	s.mu.Lock()
	if s.conn != conn { // handled already: the session moved on
		s.mu.Unlock()
		_ = conn.Close()
		return
	}
	pending := s.pending
	s.pending = make(map[int64]*call)
	s.conn, s.up = nil, false
	s.lossErr = why
	s.mu.Unlock()
	for id, c := range pending {
		select {
		case c.done <- reply{id: id, err: why}:
		default:
		}
	}
	var xe *ServerExitError
	if errors.As(why, &xe) {
		st := s.r.st
		st.mu.Lock()
		st.exits[xe.Status]++
		st.mu.Unlock()
		if s.r.o.onExit != OnExitRestart && !s.r.stopping() {
			s.r.abort(fmt.Sprintf("the stdio server of session %d exited (%s) during the run (--on-exit %s)", s.no+1, xe.Status, OnExitStop))
		}
	}
	_ = conn.Close() // reaps the child; its exit status is known already
}

// abort ends the run early because of why (the first reason is kept, as
// Report.Failure).
func (r *runner) abort(why string) {
	r.failMu.Lock()
	first := r.failure == ""
	if first {
		r.failure = why
	}
	r.failMu.Unlock()
	r.stopSending(time.Now())
	r.quit.Store(true)
	if first && r.aborted != nil {
		close(r.aborted)
	}
}

// failureLocked returns why the run failed, "" when it did not: no
// session could be set up, the run was aborted, or the server was still
// unreachable at the end (end) after DownAtEndFailure. st.mu is held.
func (r *runner) failureLocked(end time.Time) string {
	if r.st.setups == 0 && r.st.done == 0 && r.work.Err() == nil {
		why := "no session could be set up"
		if k, ok := topError(r.st.setupErrs); ok {
			why += ": " + k.class
			if k.detail != "" {
				why += ": " + k.detail
			}
		}
		return why
	}
	r.failMu.Lock()
	why := r.failure
	r.failMu.Unlock()
	o := &r.st.outage
	if down := end.Sub(o.since); why == "" && !o.since.IsZero() && down >= DownAtEndFailure && r.work.Err() == nil {
		why = fmt.Sprintf("the server was unreachable for the last %s of the run: %s", dur3(down), r.st.lastTransport)
	}
	return why
}

// DownAtEndFailure is how long the server must have been unreachable at
// the end of a run for the run to fail (a failure in its last moments
// alone does not).
const DownAtEndFailure = time.Second

// topError returns the most frequent error of m (ties: the first in
// order of class and detail).
func topError(m map[errKey]int64) (errKey, bool) {
	keys := make([]errKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		if keys[i].class != keys[j].class {
			return keys[i].class < keys[j].class
		}
		return keys[i].detail < keys[j].detail
	})
	if len(keys) == 0 {
		return errKey{}, false
	}
	return keys[0], true
}

// exitList returns the exit counts sorted by status.
func (s *stats) exitList() []ErrorCount {
	var out []ErrorCount
	for status, n := range s.exits {
		out = append(out, ErrorCount{Class: status, Count: n})
	}
	sortErrors(out)
	return out
}
