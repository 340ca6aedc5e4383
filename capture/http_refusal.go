package capture

import (
	"bytes"
	"fmt"
	"net"

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

func (l refusalListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
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
// refusal so that the client reads the answer before the connection ends.
func (c *refusalConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

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

// noteMalformed records in the tape (an "error" event of no exchange) that
// the request just read from the client at remote was refused, and why.
func (p *HTTPProxy) noteMalformed(remote, why string) {
	p.write(&tape.Record{
		Type: tape.TypeEvent, Time: p.o.now().UnixNano(), Event: tape.EventError,
		Data: marshalData(map[string]string{"error": fmt.Sprintf("malformed request from %s: %s", remote, why)}),
	})
}
