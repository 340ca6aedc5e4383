package replay

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
)

// awaitDeps waits until every dependency of st is satisfied. It returns
// false when the step must be skipped (it answers a server request the
// live server did not send), and an error when the session must stop: a
// request not answered within the timeout, a failed connection, ctx done.
func (r *runner) awaitDeps(ctx context.Context, st *Step) (bool, error) {
	for _, d := range st.Deps {
		ok, err := r.awaitOne(ctx, d)
		if err != nil {
			return false, err
		}
		if !ok && d == st.Answers {
			return false, nil
		}
	}
	return true, nil
}

// awaitOne waits for the live equivalent of Server[d]. It reports false when
// it will not come and the wait is abandoned without failing the session.
func (r *runner) awaitOne(ctx context.Context, d int) (bool, error) {
	start := time.Now()
	for {
		r.mu.Lock()
		if r.failure != nil {
			err := r.failure
			r.mu.Unlock()
			return false, err
		}
		m := r.srv[d]
		if m == nil || m.arrived { // retired ones arrived
			r.mu.Unlock()
			return true, nil
		}
		var deadline time.Time
		if m.Kind == jsonrpc.KindRequest {
			if r.laterAnswerArrived(d) {
				r.mu.Unlock()
				return false, nil
			}
			deadline = start.Add(r.o.timeout)
		} else if strings.HasPrefix(m.IDKey, "#") {
			// An answer without an id: due once the client message
			// recorded before it was sent.
			if r.lastSentIdx < m.After-1 || r.lastSentAt.IsZero() {
				r.mu.Unlock()
				return false, nil
			}
			deadline = r.lastSentAt.Add(r.o.timeout)
		} else {
			sent, wasSent := r.sentAt[m.IDKey]
			if !wasSent || r.cancelled[m.IDKey] {
				// Never sent, or cancelled: the server need not answer.
				r.mu.Unlock()
				return false, nil
			}
			deadline = sent.Add(r.o.timeout)
		}

		kind, key := m.Kind, m.IDKey
		ch := r.changed
		r.mu.Unlock()

		wait := time.Until(deadline)
		if wait <= 0 {
			if kind == jsonrpc.KindRequest || strings.HasPrefix(key, "#") {
				return false, nil // reported missing at the end
			}
			r.mu.Lock()
			_, streaming := r.liveStreamStarted(key)
			err := r.timeoutError(key)
			r.mu.Unlock()
			if streaming {
				return false, nil // a stream cut before its end: reported unfinished
			}
			return false, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ch:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return false, fmt.Errorf("stopped: %w", ctx.Err())
		}
		t.Stop()
	}
}

// laterAnswerArrived reports whether the live twin of a response recorded
// after Server[d] has arrived: the server request d, recorded before that
// response, is then not coming. mu must be held.
func (r *runner) laterAnswerArrived(d int) bool { return r.maxArrivedResp > d }

// timeoutError says which request was not answered in time.
func (r *runner) timeoutError(recKey string) error {
	return fmt.Errorf("no answer to %s within %v", r.requestDesc(recKey), r.o.timeout)
}

// awaitAnswers waits, once every step was sent, for the live answers of
// the requests that were answered in the recording.
func (r *runner) awaitAnswers(ctx context.Context) error {
	r.mu.Lock()
	pending := r.pendingServer(jsonrpc.KindResponse)
	r.mu.Unlock()
	for _, g := range pending {
		if _, err := r.awaitOne(ctx, g); err != nil {
			return err
		}
	}
	return r.awaitLast(ctx)
}

// awaitLast waits for the server messages recorded after the last client
// message (a notification that follows the last answer, a server
// request, a second answer to a request): until their live twins have
// arrived, or for the recorded gap plus the settle margin, whichever comes
// first.
func (r *runner) awaitLast(ctx context.Context) error {
	if r.o.noTrailing {
		return nil
	}
	r.mu.Lock()
	gap := time.Duration(r.lastSrvTime - r.lastStepTime)
	from := r.lastSentAt
	r.mu.Unlock()
	if gap <= 0 || from.IsZero() {
		return nil
	}
	_, err := r.waitUntil(ctx, from.Add(gap+r.o.settle), r.lastArrived)
	return err // on time out, what is missing is reported
}

// waitUntil waits until cond (called with mu held) holds, the session
// failed (its error), ctx ended, or deadline passed (false).
func (r *runner) waitUntil(ctx context.Context, deadline time.Time, cond func() bool) (bool, error) {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	for {
		r.mu.Lock()
		if r.failure != nil {
			err := r.failure
			r.mu.Unlock()
			return false, err
		}
		if cond() {
			r.mu.Unlock()
			return true, nil
		}
		ch := r.changed
		r.mu.Unlock()
		select {
		case <-ch:
		case <-t.C:
			return false, nil
		case <-ctx.Done():
			return false, fmt.Errorf("stopped: %w", ctx.Err())
		}
	}
}

// lastArrived reports whether every recorded notification, server
// request, second answer to one request (extraAnswer) and answer to an id
// no request used (ServerMsg.Unsolicited) has its live twin (the progress
// of cancelled requests aside). mu is held.
func (r *runner) lastArrived() bool {
	for _, g := range r.pendingServer(jsonrpc.KindResponse) {
		if m := r.srv[g]; m.Unsolicited || r.extraAnswer(m.IDKey) {
			return false
		}
	}
	for m, n := range r.recNotif {
		if r.liveNotif[m] < n {
			return false
		}
	}
	for k, n := range r.recProgress {
		if !r.recCancelled[k[0]] && !r.cancelled[k[0]] && r.liveProgress[k] < n {
			return false
		}
	}
	return len(r.pendingServer(jsonrpc.KindRequest)) == 0
}

// extraAnswer reports whether the recorded answer key is one more answer
// to a request already answered (a server that answered twice): the n-th
// answer to an id the client did not use n times. awaitOne does not wait
// for it (no request of that use was sent); awaitLast does, as for a
// message recorded after the last client one. mu is held.
func (r *runner) extraAnswer(key string) bool {
	base := baseKey(key)
	if base == key || strings.HasPrefix(key, "#") || r.cancelled[base] || r.recCancelled[base] {
		return false
	}
	_, isRequest := r.reqStep[key]
	return !isRequest
}
