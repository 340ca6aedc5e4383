package replay

import (
	"context"
	"fmt"
	"time"

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
