package transport

import (
	"context"
	"time"
)

// The end of an HTTP exchange: the Send's context ending, its deadline
// (SendOptions.Deadline), Exchange.CloseStream and Close.
//
// An exchange costs no context of its own while nothing waits on one. On
// the lean path (http_client_lean.go) the connection that carries the
// exchange is bound to it (bind): an end reaches the connection's I/O
// directly (abortIO, a deadline in the past), and the exchange's deadline
// is the connection's I/O deadline. The Send's context is watched by one
// context.AfterFunc, none for a context that cannot end
// (context.Background), and the connection shares that watch between
// the exchanges of one context (coverLocked): a load generator's session
// sends all its requests with one, which then cost no registration with
// it at all. A context is made only for what waits on one (context):
// dialling or waiting for a connection, a request net/http carries, an
// event stream's reader. It ends as the exchange does.

// exchangeEnd is the state of an exchange's end; Exchange.mu guards it.
type exchangeEnd struct {
	parent   context.Context // the Send's context
	deadline time.Time       // zero: none of its own
	covered  uint64          // the connection's watch of parent covering it (coverLocked), 0: none, closeOnly
	ended    bool            // an end came (abort, or the parent's end)
	conn     *leanConn       // the connection carrying the exchange, while bound
	hit      bool            // an end reached conn's I/O: it is not reused
	unwatch  func() bool     // stops the watch of parent
	ctx      context.Context // made by context, nil until then
	cancel   context.CancelFunc
}

// begin starts the end state of e, an exchange of a Send with ctx and
// deadline.
func (e *Exchange) begin(ctx context.Context, deadline time.Time) {
	e.x.parent, e.x.deadline = ctx, deadline
}

// ctxErr returns what the Err of the exchange's context is: nil while
// the exchange goes on, context.Canceled once aborted, the Send context's
// error once it ended, context.DeadlineExceeded after the deadline.
func (e *Exchange) ctxErr() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ctxErrLocked()
}

func (e *Exchange) ctxErrLocked() error {
	switch {
	case e.x.parent == nil:
		return nil // an exchange without an end of its own (stdio, WebSocket)
	case e.why != nil:
		return context.Canceled // set only while nothing else had ended it
	}
	if e.x.ctx != nil {
		if err := e.x.ctx.Err(); err != nil {
			return err
		}
	}
	if err := e.x.parent.Err(); err != nil {
		return err
	}
	// the clock, not only the context's timer: the connection's deadline
	// may end its I/O first
	if !e.x.deadline.IsZero() && !time.Now().Before(e.x.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

// abort ends the exchange, giving why as its cause (see cause) unless it
// has ended already.
func (e *Exchange) abort(why error) {
	e.mu.Lock()
	if e.x.parent == nil {
		e.mu.Unlock()
		return
	}
	if e.why == nil && e.ctxErrLocked() == nil {
		e.why = why
	}
	e.endLocked()
	cancel := e.x.cancel
	e.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// parentEnded is the watch of the Send's context: it ends the exchange.
func (e *Exchange) parentEnded() {
	e.mu.Lock()
	e.endLocked()
	e.mu.Unlock()
}

// endLocked marks the exchange ended and ends the I/O of the connection
// bound to it; e.mu is held, so that the connection cannot be unbound
// (and given to another exchange) meanwhile.
func (e *Exchange) endLocked() {
	e.x.ended = true
	if c := e.x.conn; c != nil && !e.x.hit {
		e.x.hit = true
		c.abortIO()
	}
}

// cause returns why the exchange ended: the cause given to abort, else
// the cause of the Send context's end, else context.DeadlineExceeded
// after the deadline; nil while it goes on.
func (e *Exchange) cause() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.why != nil:
		return e.why
	case e.x.parent == nil:
		return nil
	case e.x.ctx != nil && e.x.ctx.Err() != nil:
		return context.Cause(e.x.ctx)
	case e.x.parent.Err() != nil:
		return context.Cause(e.x.parent)
	}
	return e.ctxErrLocked()
}

// context returns a context that ends as the exchange does, made on the
// first call.
func (e *Exchange) context() context.Context {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.x.ctx == nil {
		if e.x.deadline.IsZero() {
			e.x.ctx, e.x.cancel = context.WithCancel(e.x.parent)
		} else {
			e.x.ctx, e.x.cancel = context.WithDeadline(e.x.parent, e.x.deadline)
		}
		if e.why != nil {
			e.x.cancel() // aborted before
		}
	}
	return e.x.ctx
}

// bind attaches the lean connection c, about to carry the exchange: the
// exchange's deadline becomes c's I/O deadline, and an end of the
// exchange ends c's I/O until unbind. It returns the exchange's end
// error, without binding, when it has ended already.
func (e *Exchange) bind(c *leanConn) error {
	// the deadline is set before c is bound: an end setting a past
	// deadline once bound must not be undone
	c.setDeadline(e.x.deadline, deadlineSlack(e.Sent, e.x.deadline))
	e.mu.Lock()
	if err := e.ctxErrLocked(); err != nil || e.x.ended {
		e.mu.Unlock()
		if err == nil {
			err = context.Canceled
		}
		return err
	}
	e.x.conn, e.x.hit = c, false
	watch := e.x.covered == 0 && e.x.unwatch == nil && e.x.parent.Done() != nil
	e.mu.Unlock()
	if watch {
		stop := context.AfterFunc(e.x.parent, e.parentEnded)
		e.mu.Lock()
		e.x.unwatch = stop
		e.mu.Unlock()
	}
	return nil
}

// unbind detaches the connection bound by bind. It reports whether the
// connection's I/O was left alone (so that it may be reused).
func (e *Exchange) unbind() bool {
	e.mu.Lock()
	clean := !e.x.hit
	e.x.conn, e.x.hit = nil, false
	e.mu.Unlock()
	return clean
}

// sendWatch is the connection's watch of one Send context, shared by the
// exchanges of that context (see coverLocked); HTTPConn.mu guards it.
type sendWatch struct {
	done    <-chan struct{} // the watched context's Done; nil: none
	gen     uint64          // numbers the watches: an exchange covered holds its watch's
	covered int             // live exchanges covered by the watch
	stop    func() bool     // stops the watch (nil while being registered)
}

// coverLocked is called by startExchange for ex, an exchange of a Send
// with ctx, with c.mu held. The connection watches one Send context that
// can end, and the exchanges of that context are covered by the watch
// (sendContextEnded ends them), costing no registration of their own. The
// watch moves to the context of a new exchange when no live exchange is
// covered by it; while one is, the exchanges of other contexts watch
// their own (bind). It returns whether ctx is to be watched now, and the
// stop function of the watch it replaced.
func (c *HTTPConn) coverLocked(ctx context.Context, ex *Exchange) (watch bool, unwatch func() bool) {
	done := ctx.Done()
	w := &c.watch
	switch {
	case done == nil:
		return false, nil
	case done == c.ctx.Done():
		// the connection's own context (a GET stream's) ends only at
		// Close, which ends every exchange anyway: no watch at all
		ex.x.covered = closeOnly
		return false, nil
	case w.done == done:
	case w.covered == 0:
		unwatch = w.stop
		w.gen++
		w.done, w.stop, watch = done, nil, true
	default:
		return false, nil
	}
	w.covered++
	ex.x.covered = w.gen
	return watch, unwatch
}

// closeOnly is the covered mark of an exchange of the connection's own
// context: no watch's, and none needed.
const closeOnly = ^uint64(0)

// uncoverLocked takes ex, complete, out of the count of its watch; c.mu
// is held.
func (c *HTTPConn) uncoverLocked(ex *Exchange) {
	if ex.x.covered != 0 && ex.x.covered == c.watch.gen {
		c.watch.covered--
	}
}

// watchSendContext registers the watch gen of ctx (see coverLocked).
func (c *HTTPConn) watchSendContext(ctx context.Context, gen uint64) {
	stop := context.AfterFunc(ctx, func() { c.sendContextEnded(gen) })
	c.mu.Lock()
	current := c.watch.gen == gen
	if current {
		c.watch.stop = stop
	}
	c.mu.Unlock()
	if !current {
		stop() // replaced or ended meanwhile
	}
}

// sendContextEnded is the watch gen of a Send context that ended: it ends
// the exchanges it covers.
func (c *HTTPConn) sendContextEnded(gen uint64) {
	var ended []*Exchange
	c.mu.Lock()
	if c.watch.gen == gen {
		c.watch.gen++ // the exchanges it covered are no longer counted
		c.watch.done, c.watch.stop, c.watch.covered = nil, nil, 0
	}
	for ex := range c.live {
		if ex.x.covered == gen {
			ended = append(ended, ex)
		}
	}
	c.mu.Unlock()
	for _, ex := range ended {
		ex.parentEnded()
	}
}

// release frees what the exchange's end holds, once the exchange is
// complete: the watch of the Send's context, the context made by context.
func (e *Exchange) release() {
	e.mu.Lock()
	unwatch, cancel := e.x.unwatch, e.x.cancel
	e.x.unwatch = nil
	e.mu.Unlock()
	if unwatch != nil {
		unwatch()
	}
	if cancel != nil {
		cancel()
	}
}
