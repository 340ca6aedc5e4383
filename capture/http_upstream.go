package capture

// The wire side of the lean path (http_lean.go): the upstream connection a
// client connection is pinned to, and the request and response heads as
// they are written on the way through.

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/textproto"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mcptape/mcptape/internal/httphead"
	"github.com/mcptape/mcptape/internal/rawio"
	"github.com/mcptape/mcptape/transport"
)

// upstreamConn is one HTTP/1.1 keep-alive connection to the upstream.
type upstreamConn struct {
	c    net.Conn            // plain, or TLS over raw
	raw  net.Conn            // the TCP connection
	peek *transport.IdlePeek // looks at raw before each reuse
	br   *bufio.Reader       // reads c through lim
	lim  headLimit
	head []byte // the request head being written
	used bool   // it carried an exchange already
}

// upstreamAddr returns the host:port to dial for u's host.
func upstreamAddr(scheme, host string) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	port := "80"
	if scheme == "https" {
		port = "443"
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), port)
}

// dialUpstream opens a connection to the upstream, with a TLS handshake
// for an https upstream.
func (p *HTTPProxy) dialUpstream(ctx context.Context) (*upstreamConn, error) {
	d := net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	raw, err := d.DialContext(ctx, "tcp", upstreamAddr(p.up.Scheme, p.up.Host))
	if err != nil {
		return nil, err
	}
	raw = rawio.Wrap(raw)
	if p.up.Scheme == "http" {
		return newUpstreamConn(raw, raw), nil
	}
	tc := tls.Client(raw, &tls.Config{
		ServerName:         p.up.Hostname(),
		InsecureSkipVerify: p.o.insecure, //nolint:gosec // asked for with --insecure
		NextProtos:         []string{"http/1.1"},
	})
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err = tc.HandshakeContext(hctx)
	cancel()
	if err != nil {
		raw.Close()
		return nil, err
	}
	return newUpstreamConn(tc, raw), nil
}

func newUpstreamConn(c, raw net.Conn) *upstreamConn {
	u := &upstreamConn{c: c, raw: raw, peek: transport.NewIdlePeek(raw)}
	u.lim.r = c
	u.br = bufio.NewReaderSize(&u.lim, 4<<10)
	return u
}

// quiet reports whether u, idle, may carry another request: the upstream
// has not closed it, and nothing waits to be read on it.
func (u *upstreamConn) quiet() bool {
	if u.br.Buffered() > 0 || !u.peek.Quiet() {
		return false
	}
	if u.c == u.raw {
		return true
	}
	// TLS: bytes read from the socket along with the last response may
	// wait in the TLS connection, decrypted or not. Look without waiting.
	u.c.SetReadDeadline(aLongTimeAgo)
	_, err := u.br.Peek(1)
	u.c.SetReadDeadline(time.Time{})
	return errors.Is(err, os.ErrDeadlineExceeded)
}

// maxResponseHead bounds the bytes of one response head (each 1xx head
// too), as net/http's Transport does by default.
const maxResponseHead = 10 << 20

// errResponseHeadTooLarge fails a response head beyond maxResponseHead.
var errResponseHeadTooLarge = errors.New("response head too large")

// headLimit is the reader under an upstream connection's bufio.Reader:
// while on, it lets left more bytes through, then fails.
type headLimit struct {
	r    io.Reader
	on   bool
	left int
}

func (l *headLimit) Read(p []byte) (int, error) {
	if !l.on {
		return l.r.Read(p)
	}
	if l.left <= 0 {
		return 0, errResponseHeadTooLarge
	}
	if len(p) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= n
	return n, err
}

// maxInlineBody is the largest request body sent in the same write as its
// head (larger ones go in a second write, without a copy).
const maxInlineBody = 8 << 10

// writeRequest sends r to the upstream: its request line and headers as
// received, less what HTTP forbids a proxy to forward (hop-by-hop
// headers), with Host set to host and Content-Length from the body.
func (u *upstreamConn) writeRequest(r *http.Request, host string, body []byte) error {
	b := u.head[:0]
	b = append(b, r.Method...)
	b = append(b, ' ')
	b = append(b, r.RequestURI...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, host...)
	b = append(b, "\r\n"...)
	conn := r.Header["Connection"]
	for name, values := range r.Header {
		if requestHeaderSkipped(name) || connectionListed(conn, name) {
			continue
		}
		for _, v := range values {
			b = appendHeader(b, name, v)
		}
	}
	if headerHasToken(r.Header["Te"], "trailers") {
		b = append(b, "Te: trailers\r\n"...)
	}
	if len(body) > 0 || r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	var err error
	if len(body) <= maxInlineBody {
		b = append(b, body...)
		_, err = u.c.Write(b)
	} else {
		bufs := net.Buffers{b, body}
		_, err = bufs.WriteTo(u.c)
	}
	if cap(b) <= 64<<10 {
		u.head = b[:0]
	}
	return err
}

// readResponse reads the upstream's response to r; informational (1xx)
// responses before it are passed to interim.
func (u *upstreamConn) readResponse(r *http.Request, interim func(*http.Response) error) (*http.Response, error) {
	u.lim.on, u.lim.left = true, maxResponseHead
	defer func() { u.lim.on = false }()
	if _, err := u.br.Peek(1); err != nil {
		return nil, err // nothing came: io.EOF when the upstream had closed
	}
	for {
		resp := parseFastResponse(u.br, r)
		if resp == nil {
			var err error
			if resp, err = http.ReadResponse(u.br, r); err != nil {
				return nil, err
			}
		}
		switch {
		case resp.StatusCode == http.StatusSwitchingProtocols:
			return nil, errors.New("unexpected 101 Switching Protocols: no upgrade was asked for")
		case resp.StatusCode >= 100 && resp.StatusCode < 200:
			if err := interim(resp); err != nil {
				return nil, err
			}
			u.lim.left = maxResponseHead // the next head may have as much
			continue
		}
		return resp, nil
	}
}

// retryableError reports whether err, met on a reused connection before
// any response byte, means the upstream had closed it while it was idle.
func retryableError(err error) bool {
	return err == io.EOF || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// replayable reports whether r may be sent again after a failure on a
// stale connection: the rule of net/http's Transport under ReverseProxy,
// where a request body cannot be sent twice (no body, and an idempotent
// method or an idempotency key).
func replayable(r *http.Request) bool {
	if r.ContentLength != 0 {
		return false
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	return r.Header["Idempotency-Key"] != nil || r.Header["X-Idempotency-Key"] != nil
}

// checkRequestHead makes the checks net/http's server makes beyond
// http.ReadRequest: a Host made of host bytes, header names that are
// tokens, values without control bytes. The lean path hands a request
// that fails them to net/http, which answers 400: forwarded, a name like
// "Content-Length " could frame the request differently upstream. The
// error names no value (values may be secrets).
func checkRequestHead(r *http.Request) error {
	if !validHost(r.Host) {
		return errors.New("malformed Host header")
	}
	for name, values := range r.Header {
		if !httphead.IsToken(name) {
			return errors.New("invalid header name")
		}
		for _, v := range values {
			if !httphead.ValidValue(v) {
				return fmt.Errorf("invalid value in header %s", name)
			}
		}
	}
	return nil
}

// validHost reports whether h holds only bytes of a URI host and port
// (RFC 3986: unreserved, sub-delims, '%', ':' and IPv6 brackets).
func validHost(h string) bool {
	for i := 0; i < len(h); i++ {
		c := h[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && strings.IndexByte("-._~!$&'()*+,;=%:[]", c) < 0 {
			return false
		}
	}
	return true
}

// hopByHop are the headers that concern one connection only (RFC 9110
// 7.6.1): never forwarded. Te's "trailers" is passed on.
var hopByHop = [...]string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// requestHeaderSkipped reports whether the request header name is not
// copied to the upstream as it is: hop-by-hop headers, and the framing
// headers written from the body.
func requestHeaderSkipped(name string) bool {
	if name == "Content-Length" {
		return true
	}
	for _, h := range hopByHop {
		if name == h {
			return true
		}
	}
	return false
}

// connectionListed reports whether name is listed in a Connection header
// (values conn): such headers are hop-by-hop too.
func connectionListed(conn []string, name string) bool {
	if conn == nil {
		return false
	}
	for _, v := range conn {
		for v != "" {
			var tok string
			tok, v, _ = strings.Cut(v, ",")
			if tok = textproto.TrimString(tok); tok != "" && http.CanonicalHeaderKey(tok) == name {
				return true
			}
		}
	}
	return false
}

// headerHasToken reports whether a comma-separated header holds token.
func headerHasToken(values []string, token string) bool {
	for _, v := range values {
		for v != "" {
			var tok string
			tok, v, _ = strings.Cut(v, ",")
			if strings.EqualFold(textproto.TrimString(tok), token) {
				return true
			}
		}
	}
	return false
}

// removeHopByHop deletes the hop-by-hop headers of a response.
func removeHopByHop(h http.Header) {
	for _, v := range h["Connection"] {
		for v != "" {
			var tok string
			tok, v, _ = strings.Cut(v, ",")
			if tok = textproto.TrimString(tok); tok != "" && !strings.EqualFold(tok, "keep-alive") && !strings.EqualFold(tok, "close") {
				delete(h, http.CanonicalHeaderKey(tok))
			}
		}
	}
	for _, name := range hopByHop {
		delete(h, name)
	}
}

// appendHeader appends one header line.
func appendHeader(b []byte, name, value string) []byte {
	b = append(b, name...)
	b = append(b, ": "...)
	b = append(b, value...)
	return append(b, "\r\n"...)
}

// appendStatusLine appends the status line of an HTTP/1.1 response with
// code, worded as net/http words it.
func appendStatusLine(b []byte, code int) []byte {
	b = append(b, "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, ' ')
	if text := http.StatusText(code); text != "" {
		return append(append(b, text...), "\r\n"...)
	}
	b = append(b, "status code "...)
	b = strconv.AppendInt(b, int64(code), 10)
	return append(b, "\r\n"...)
}

// bodyless reports whether a response to method with status code has no
// body, whatever its headers say.
func bodyless(method string, code int) bool {
	return method == http.MethodHead || code == http.StatusNoContent || code == http.StatusNotModified || (code >= 100 && code < 200)
}

// suppressedHeader reports whether net/http's server leaves the header
// name out of a response with status code, which has no body: its
// framing headers, and for 304 its Content-Type too (RFC 9110 8.6, RFC
// 9110 15.4.5). The lean path leaves out the same.
func suppressedHeader(code int, name string) bool {
	switch name {
	case "Content-Length", "Transfer-Encoding":
		return code == http.StatusNoContent || code == http.StatusNotModified || code >= 100 && code < 200
	case "Content-Type":
		return code == http.StatusNotModified
	}
	return false
}

// namesProxy reports whether the request's Host header names the proxy
// itself: the address the connection reached (an IP literal, or
// "localhost" on a loopback address, with the same port), or an address
// given with WithListenAddr. An empty Host also counts.
func (p *HTTPProxy) namesProxy(r *http.Request) bool {
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return p.hostNamesProxy(r.Host, localAddrOf(local), r.TLS != nil)
}

// localAddr is the address a client connection reached, parsed.
type localAddr struct {
	ip   netip.Addr
	port string
	ok   bool
}

// localAddrOf parses the address of a connection's local end.
func localAddrOf(a net.Addr) localAddr {
	if a == nil {
		return localAddr{}
	}
	lhost, lport, err := net.SplitHostPort(a.String())
	if err != nil {
		return localAddr{}
	}
	lip, err := netip.ParseAddr(lhost)
	if err != nil {
		return localAddr{}
	}
	return localAddr{ip: lip.Unmap(), port: lport, ok: true}
}

// hostNamesProxy is namesProxy for a Host header value, on a connection
// that reached local (over TLS when tls is set).
func (p *HTTPProxy) hostNamesProxy(host string, local localAddr, tls bool) bool {
	if host == "" {
		return true
	}
	for _, n := range p.o.listenNames {
		if strings.EqualFold(host, n) {
			return true
		}
	}
	if !local.ok {
		return false
	}
	h, port, err := net.SplitHostPort(host)
	if err != nil {
		h, port = strings.Trim(host, "[]"), "80"
		if tls {
			port = "443"
		}
	}
	if port != local.port {
		return false
	}
	if strings.EqualFold(h, "localhost") {
		return local.ip.IsLoopback()
	}
	hip, err := netip.ParseAddr(h)
	return err == nil && hip.Unmap() == local.ip
}
