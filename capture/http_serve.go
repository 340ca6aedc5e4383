package capture

// Serving the proxy on a listener: the lean path (http_lean.go) for plain
// HTTP/1.1 connections, a net/http server running ServeHTTP for the
// connections handed over to it (and for everything when the lean path
// is off), and the shutdown of both.

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptape/mcptape/internal/rawio"
)

// Serve serves the proxy on ln until ctx ends, then shuts down: it stops
// accepting, lets open exchanges finish for the shutdown grace (cut short
// when the WithShutdownCut context ends), cancels
// the rest (recorded as closed by the proxy), and closes the sessions still
// open. ln is closed on return. It returns nil after such a stop.
//
// Connections are served by the lean path, which forwards each client
// connection over an upstream connection of its own, unless the proxy was
// given its own transport (WithTransport) or the environment names an
// HTTP proxy for the upstream; then, and for requests the lean path does
// not handle, net/http serves them with ServeHTTP.
func (p *HTTPProxy) Serve(ctx context.Context, ln net.Listener) error {
	ln = p.listener(ln) // http_tls.go: HTTPS when WithTLS
	srv := &http.Server{
		Handler:           p,
		ReadHeaderTimeout: p.o.headTimeout,
		IdleTimeout:       leanIdleTimeout,
		ConnState:         p.ConnState,
		ErrorLog:          log.New(logWriter(p.o.debugf), "", 0),
	}
	var ls *leanServer
	errc := make(chan error, 1)
	accepted := make(chan error, 1)
	if p.lean {
		ls = &leanServer{p: p, ln: ln, conns: make(map[*leanConn]bool), fallback: newHandoffListener(ln.Addr()), start: time.Now(),
			wake: make(chan struct{}, 1)}
		go func() { errc <- srv.Serve(ls.fallback) }()
		go func() { accepted <- ls.accept() }()
		watching := make(chan struct{})
		defer close(watching)
		go ls.watchLoop(watching)
	} else {
		go func() { errc <- srv.Serve(refusalListener{ln, p}) }()
	}
	var failed error
	select {
	case err := <-errc:
		if ls != nil {
			ln.Close()
			ls.closeAll()
			<-accepted
			ls.wg.Wait()
		}
		p.Close()
		return fmt.Errorf("capture: serving %s: %w", ln.Addr(), err)
	case err := <-accepted:
		accepted <- nil
		failed = fmt.Errorf("capture: serving %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	p.o.debugf("shutting down: waiting up to %v for open exchanges", p.o.grace)
	sctx, cancel := p.o.shutdownContext(ctx) // the grace, or less: WithShutdownCut
	var wg sync.WaitGroup
	if ls != nil {
		ln.Close()
		ls.shutdown()
		wg.Go(func() { ls.waitDone(sctx) })
	}
	_ = srv.Shutdown(sctx) // stops accepting; returns early when everything is idle
	wg.Wait()
	cancel()
	p.stop()    // cancel the exchanges still open (their records say "proxy")
	srv.Close() // and close their connections, unblocking writes to stuck clients
	if ls != nil {
		ls.closeAll()
		<-accepted
		ls.wg.Wait()
	}
	err := errors.Join(failed, p.Close())
	if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) {
		return errors.Join(err, fmt.Errorf("capture: serving %s: %w", ln.Addr(), serr))
	}
	return err
}

// WithShutdownCut sets a context whose end cuts Serve's shutdown grace
// short: the exchanges still open are then cancelled at once (recorded as
// closed by the proxy), as when the grace is up. mcptape record ends it at
// a second Ctrl-C.
func WithShutdownCut(ctx context.Context) HTTPOption {
	return func(o *httpOptions) error { o.cut = ctx; return nil }
}

// shutdownContext returns the context of Serve's shutdown grace, which
// began when ctx ended: it ends after the grace or with the
// WithShutdownCut context, whichever comes first.
func (o *httpOptions) shutdownContext(ctx context.Context) (context.Context, context.CancelFunc) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.grace)
	if o.cut == nil {
		return sctx, cancel
	}
	stop := context.AfterFunc(o.cut, cancel)
	return sctx, func() { stop(); cancel() }
}

// leanServer accepts the connections of the lean path and follows them
// for the shutdown.
type leanServer struct {
	p        *HTTPProxy
	ln       net.Listener
	fallback *handoffListener // to the net/http server

	mu      sync.Mutex
	conns   map[*leanConn]bool // open connections
	closing atomic.Bool
	wg      sync.WaitGroup // connection goroutines
	// start is the origin of clock, the monotonic time by which the
	// connections' idle waits and exchanges are timed (see leanConn.readBy
	// and leanConn.busy).
	start time.Time
	// wakeAt is when the watch loop wakes next (the clock; MaxInt64:
	// never), wake wakes it earlier (see need).
	wakeAt atomic.Int64
	wake   chan struct{}
}

// clock returns the time elapsed since s started, monotonic.
func (s *leanServer) clock() int64 { return int64(time.Since(s.start)) }

// accept serves the connections ln accepts until ln is closed. A
// temporary failure (out of file descriptors, say) does not stop it: it
// waits, as net/http's server does, and tries again.
func (s *leanServer) accept() error {
	var delay time.Duration
	for {
		c, err := s.ln.Accept()
		if err != nil {
			switch {
			case s.closing.Load():
				return nil
			case temporaryAccept(err):
				delay = acceptBackoff(delay)
				s.p.acceptFailed(err, delay)
				time.Sleep(delay)
				continue
			}
			return err
		}
		delay = 0
		lc := newLeanConn(s, rawio.Wrap(c))
		s.mu.Lock()
		if s.closing.Load() {
			s.mu.Unlock()
			c.Close()
			continue
		}
		s.conns[lc] = true
		s.wg.Add(1)
		s.mu.Unlock()
		go lc.serve()
	}
}

// Accept failures. A listener that fails for want of file descriptors
// (EMFILE, ENFILE) or for a connection aborted before it was accepted
// fails for a while only: ending the recording then would cut every
// client. Both paths keep serving, the lean one with the back-off of
// net/http's server (which serves the other), and the first such failure
// is reported through warnf, once.

// maxAcceptBackoff is the longest wait between tries after failed Accepts.
const maxAcceptBackoff = time.Second

// temporaryAccept reports whether an Accept error is temporary: what
// net/http's server rides out (net.Error's Temporary, deprecated for most
// uses but still net/http's test here).
func temporaryAccept(err error) bool {
	var te interface{ Temporary() bool }
	return errors.As(err, &te) && te.Temporary()
}

// acceptBackoff returns the wait after a failed Accept that followed
// one of d: 5 ms, then twice as long each time, up to maxAcceptBackoff.
func acceptBackoff(d time.Duration) time.Duration {
	if d == 0 {
		return 5 * time.Millisecond
	}
	return min(2*d, maxAcceptBackoff)
}

// acceptFailed reports a temporary Accept failure: the first through
// warnf, every one through debugf.
func (p *HTTPProxy) acceptFailed(err error, retry time.Duration) {
	if !p.acceptWarned.Swap(true) {
		p.o.warnf("accepting connections: %v; still serving, retrying with waits of up to %v (further failures are not reported)", err, maxAcceptBackoff)
	}
	p.o.debugf("accept: %v; retrying in %v", err, retry)
}

// setIdle notes whether lc waits for a request; false means the server is
// shutting down and lc, idle, must close.
func (s *leanServer) setIdle(lc *leanConn, idle bool) bool {
	lc.idle.Store(idle)
	return !idle || !s.closing.Load()
}

// forget drops a connection that ended.
func (s *leanServer) forget(lc *leanConn) {
	s.mu.Lock()
	delete(s.conns, lc)
	s.mu.Unlock()
	s.wg.Done()
}

// shutdown closes the idle connections; the others close once their
// exchange ends.
func (s *leanServer) shutdown() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closing.Store(true)
	for lc := range s.conns {
		if lc.idle.Load() {
			lc.c.Close()
		}
	}
}

// waitDone waits until every connection has closed, or ctx ends.
func (s *leanServer) waitDone(ctx context.Context) {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		s.mu.Lock()
		n := len(s.conns)
		s.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// closeAll closes every connection.
func (s *leanServer) closeAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closing.Store(true)
	for lc := range s.conns {
		lc.c.Close()
	}
}

// handoffListener is the net/http server's listener: it yields the
// connections the lean path hands over.
type handoffListener struct {
	addr  net.Addr
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newHandoffListener(addr net.Addr) *handoffListener {
	return &handoffListener{addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *handoffListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *handoffListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *handoffListener) Addr() net.Addr { return l.addr }

// give hands c to the server; false when the listener is closed.
func (l *handoffListener) give(c net.Conn) bool {
	select {
	case l.conns <- c:
		return true
	case <-l.done:
		return false
	}
}

// handOver gives the connection, with the bytes of the request just read,
// to the net/http server; it reports whether that server took it.
func (lc *leanConn) handOver() bool {
	lc.dropUpstream()
	replay := append([]byte(nil), lc.tap.buf...)
	lc.tap.buf = nil
	return lc.srv.fallback.give(&replayConn{Conn: lc.c, pending: replay})
}

// replayConn is a client connection handed over with bytes already read.
type replayConn struct {
	net.Conn
	pending []byte
}

func (c *replayConn) Read(p []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// CloseWrite closes the sending side (see refusalConn.CloseWrite).
func (c *replayConn) CloseWrite() error { return closeWrite(c.Conn) }
