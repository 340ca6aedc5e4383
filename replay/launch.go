package replay

import (
	"context"
	"fmt"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/transport"
)

// launch is a frame holding requests sent on its own goroutine
// (sendAsync): when it lands (transport.Landing), and how to end its Send.
type launch struct {
	*transport.Landing
	// abort ends the Send's context: the POST is given up while its
	// answer's headers have not come, its stream closed after. It is
	// called once the exchange is complete, to free the context.
	abort context.CancelFunc
}

// awaitLaunched waits until the request with recorded id key, if it was
// sent on its own goroutine (sendAsync), is known to have reached the
// server: until its Send returned (the answer's headers came, or it
// failed), or its POST was written and transport.LandGrace has passed
// since (transport.Landing). A POST slow to leave (a connection to dial,
// a loaded machine) is waited for up to the timeout (then a note says
// so): the request would be missing by then anyway.
func (r *runner) awaitLaunched(ctx context.Context, key string) {
	r.mu.Lock()
	l := r.launched[key]
	r.mu.Unlock()
	if l == nil {
		return
	}
	limit := time.NewTimer(r.o.timeout)
	defer limit.Stop()
	select {
	case <-l.Landed(): // the Send failed unwritten
		return
	case <-l.Written():
	case <-limit.C:
		r.mu.Lock()
		r.addNote(fmt.Sprintf("the POST of %s was not written within %v: the message naming it went anyway", r.requestDesc(key), r.o.timeout))
		r.mu.Unlock()
		return
	case <-ctx.Done():
		return
	}
	select {
	case <-l.Landed():
	case <-ctx.Done():
	}
}

// awaitReturned waits until the Send of l returned (its answer's headers
// came, or it failed), or the timeout passed.
func (r *runner) awaitReturned(ctx context.Context, l *launch) error {
	limit := time.NewTimer(r.o.timeout)
	defer limit.Stop()
	select {
	case <-l.Returned():
	case <-limit.C:
	case <-ctx.Done():
		return fmt.Errorf("stopped: %w", ctx.Err())
	}
	return nil
}

// returned reports whether the Send of l returned.
func returned(l *launch) bool {
	select {
	case <-l.Returned():
		return true
	default:
		return false
	}
}

// brokenGrace bounds the wait, once an HTTP answer broke off, for the
// receiver to take the answer it may have carried.
const brokenGrace = time.Second

// watchBroken fails the session when the HTTP answer ex to the requests
// among sent breaks off (its stream failed: the server died or cut the
// connection) and one of them is still unanswered brokenGrace later:
// waiting for the timeout would only delay the same verdict. A request
// cancelled or whose stream the replay closed, or whose streamed answer
// had begun (reported unfinished), is left to the usual end. ctx is the
// session's.
func (r *runner) watchBroken(ctx context.Context, ex *transport.Exchange, sent []queued) {
	ex.AfterDone(func() {
		err := ex.Err()
		if err == nil || ctx.Err() != nil {
			return
		}
		time.AfterFunc(brokenGrace, func() {
			r.mu.Lock()
			defer r.mu.Unlock()
			if r.closing || r.failure != nil {
				return
			}
			for k := range sent {
				st := &sent[k].st
				key := st.IDKey
				if st.Kind != jsonrpc.KindRequest || r.cancelled[key] || r.closed[key] {
					continue
				}
				if _, waiting := r.respIdx[key]; !waiting {
					continue
				}
				if _, streaming := r.liveStreamStarted(key); streaming {
					continue
				}
				r.fail(fmt.Errorf("the server ended the answer to %s without it: %w", r.requestDesc(key), err))
				return
			}
		})
	})
}
