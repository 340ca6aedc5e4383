package capture

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/mcptape/mcptape/tape"
)

// Requests net/http refuses. On the lean path the proxy reads every
// request head itself and notes a malformed one in the tape (see
// leanConn.noteMalformed). When net/http serves every connection (the
// proxy has a transport of its own, or the environment names an HTTP
// proxy), its server refuses a malformed request before any handler runs,
// answering it itself, straight on the connection: refusalListener's
// connections recognise that answer and note it the same way.

// refusalListener hands out connections that note net/http's refusals.
type refusalListener struct {
	net.Listener
	p *HTTPProxy
}

// Accept reports a temporary failure (see acceptFailed) before net/http's
// server, which waits and tries again, gets it.
func (l refusalListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		if temporaryAccept(err) {
			l.p.acceptFailed(err, 0)
		}
		return nil, err
	}
	return &refusalConn{Conn: c, p: l.p}, nil
}

// refusalConn is a client connection of the net/http path.
type refusalConn struct {
	net.Conn
	p *HTTPProxy
}

func (c *refusalConn) Write(b []byte) (int, error) {
	if why, ok := netHTTPRefusal(b); ok {
		c.p.noteMalformed(c.RemoteAddr().String(), why)
	}
	return c.Conn.Write(b)
}

// CloseWrite closes the sending side, as net/http's server does after a
// refusal so that the client reads the answer before the connection ends
// (then waits half a second before closing: a connection net/http gets
// wrapped must pass CloseWrite on, or the client waits that half second).
func (c *refusalConn) CloseWrite() error { return closeWrite(c.Conn) }

// refusalHeaders are the headers of net/http's own answers to a request it
// refuses (400, 431, 501...), the only ones it sends. A handler's answer
// always has a Date and sorts Connection before Content-Type, so no
// forwarded answer looks like one.
const refusalHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// maxRefusal bounds the reason taken from a refusal's body.
const maxRefusal = 200

// netHTTPRefusal reports whether b, one write to a client connection, is
// net/http's own refusal of a request, and the reason it gives (its body,
// such as "400 Bad Request: malformed Host header"; net/http's words, never
// the request's bytes).
func netHTTPRefusal(b []byte) (why string, ok bool) {
	if len(b) < 13 || string(b[:9]) != "HTTP/1.1 " || b[9] != '4' && b[9] != '5' {
		return "", false
	}
	i := bytes.Index(b, []byte(refusalHeaders))
	if i < 0 || bytes.IndexByte(b[:i], '\n') >= 0 { // the headers follow the status line
		return "", false
	}
	body := b[i+len(refusalHeaders):]
	return string(body[:min(len(body), maxRefusal)]), true
}

// faultOf says what is wrong in a request, from the error that refused it,
// without the request's bytes (which may hold secrets): the words before
// any quote or colon.
func faultOf(err error) string {
	why := err.Error()
	if i := strings.IndexAny(why, ":\""); i >= 0 {
		why = strings.TrimSpace(why[:i])
	}
	return why
}

// noteMalformed records in the tape (an "error" event of no exchange) that
// the request just read from the client at remote was refused, and why.
func (p *HTTPProxy) noteMalformed(remote, why string) {
	p.write(&tape.Record{
		Type: tape.TypeEvent, Time: p.o.now().UnixNano(), Event: tape.EventError,
		Data: marshalData(map[string]string{"error": fmt.Sprintf("malformed request from %s: %s", remote, why)}),
	})
}

// A request body whose framing breaks (a bad chunk size, chunk data longer
// than its size, a malformed trailer) ends its connection: whatever
// follows on the wire must not be taken for another request, as net/http's
// server says, and does when it reads a body for a handler. The proxy
// reads bodies in full duplex (see ServeHTTP), where net/http does not
// check; bodyGuard does it instead. A framing error met before the
// upstream answered gets the client a 400 (not a 502: the upstream did
// nothing wrong) saying what is wrong; met later, the response goes on.
// Either way the connection closes after the answer, and the tape notes
// the malformed request as it notes a malformed head.

// bodyGuard reads a request body on the net/http path and keeps the error
// that cut it short, if any.
type bodyGuard struct {
	rc   io.ReadCloser
	mu   sync.Mutex
	err  error // the first error other than the body's end
	done bool  // the body ended, or was closed
}

func (g *bodyGuard) Read(p []byte) (int, error) {
	n, err := g.rc.Read(p)
	g.see(err)
	return n, err
}

// Close closes the body; net/http's reads what is left of it (up to
// 256 KiB), which may meet a framing error too.
func (g *bodyGuard) Close() error {
	err := g.rc.Close()
	g.mu.Lock()
	g.done = true
	g.mu.Unlock()
	g.see(err)
	return err
}

func (g *bodyGuard) see(err error) {
	if err == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case err == io.EOF:
		g.done = true
	case g.err == nil && !errors.Is(err, http.ErrBodyReadAfterClose):
		g.err = err
	}
}

// ended reports whether the body has ended or was closed.
func (g *bodyGuard) ended() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.done || g.err != nil
}

// failed returns whether the error that cut the body short, if any, is
// a framing error (not the client's going away: an early end of the
// connection, or a network error), and the error.
func (g *bodyGuard) failed() (malformed bool, err error) {
	g.mu.Lock()
	err = g.err
	g.mu.Unlock()
	var ne net.Error
	return err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.As(err, &ne), err
}

// malformedBodyError is the failure of an exchange whose request body
// was malformed.
type malformedBodyError struct{ why string }

func (e *malformedBodyError) Error() string { return "malformed request body: " + e.why }

// failStatus is the status an exchange that failed with err answered.
func failStatus(err error) int {
	var mb *malformedBodyError
	if errors.As(err, &mb) {
		return http.StatusBadRequest
	}
	return http.StatusBadGateway
}

// refuseBody answers, with a 400, an exchange whose request body broke
// before the upstream answered (onError), and reports whether it did.
func (p *HTTPProxy) refuseBody(w http.ResponseWriter, x *exchange) bool {
	g, ok := x.tee.rc.(*bodyGuard)
	if !ok {
		return false
	}
	malformed, err := g.failed()
	if !malformed {
		return false
	}
	x.failErr = &malformedBodyError{faultOf(err)}
	x.mu.Lock()
	if !x.sessionKnown {
		x.setSession(x.conn.session, kindConnection, "connection")
	}
	x.recordRequestLocked(true)
	x.mu.Unlock()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Connection", "close")
	w.WriteHeader(http.StatusBadRequest)
	io.WriteString(w, "mcptape: "+x.failErr.Error()+"\n")
	return true
}

// settleBody, once the ReverseProxy is done with the request, closes its
// body, then, if the body broke, makes the client connection close after
// the answer and notes a malformed body in the tape. w is net/http's own
// ResponseWriter: a wrapper hides what closes the connection.
//
// Closing the body reads what is left of it (up to 256 KiB, waiting for
// a read of the transport's that may still run): net/http's server does
// the same once the handler returns, where its error goes unseen. The
// answer goes out first, as it would then: the client may wait for it
// before it sends the rest.
func (p *HTTPProxy) settleBody(w http.ResponseWriter, r *http.Request, g *bodyGuard) {
	if !g.ended() {
		http.NewResponseController(w).Flush()
		g.Close()
	}
	malformed, err := g.failed()
	if err == nil {
		return
	}
	closeAfterReply(w)
	if malformed {
		p.noteMalformed(r.RemoteAddr, "request body: "+faultOf(err))
	}
}

// closeAfterReply makes net/http's server close the connection of w once
// the answer is out, even after the response headers went. A body reader
// past the limit of http.MaxBytesReader is its documented way to say so
// ("it tells the ResponseWriter to close the connection after the limit
// has been reached"): one byte read under a limit of none.
func closeAfterReply(w http.ResponseWriter) {
	var b [1]byte
	_, _ = http.MaxBytesReader(w, io.NopCloser(strings.NewReader("x")), 0).Read(b[:])
}
