package capture

// The wire side of the lean path (http_lean.go): the upstream connection a
// client connection is pinned to (an internal/http1 connection, the one
// HTTP/1.1 client mcptape has: it writes the forwarded request and reads
// the response as net/http reads it), and the response heads as they are
// written back to the client.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/mcptape/mcptape/internal/http1"
	"github.com/mcptape/mcptape/internal/httphead"
	"github.com/mcptape/mcptape/internal/rawio"
)

// upstreamConn is one HTTP/1.1 keep-alive connection to the upstream.
type upstreamConn struct {
	*http1.Conn
	used bool // it carried an exchange already
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
	u := &upstreamConn{Conn: http1.NewConn(c, raw)}
	// A lean connection's exchange is over, its response forgotten (see
	// leanConn.exchange), before it reads the next response.
	u.Reuse = true
	return u
}

// writeRequest sends r to the upstream: its request line and headers as
// received, less what HTTP forbids a proxy to forward (hop-by-hop
// headers), with Host set to host and Content-Length from the body.
func (u *upstreamConn) writeRequest(r *http.Request, host string, body []byte) error {
	return u.WriteRequest(&http1.Request{Method: r.Method, Target: r.RequestURI, Host: host, Header: r.Header, Mode: http1.Forwarded, Body: body})
}

// retryable reports whether r, which failed with err on a reused
// connection (nothingWritten: before a byte of it was written), may be
// sent again on a new one: the rules of net/http's Transport under
// ReverseProxy (http1.Retryable), where a request body cannot be sent
// twice.
func retryable(r *http.Request, err error, nothingWritten bool) bool {
	return r.ContentLength == 0 && http1.Retryable(err, nothingWritten, http1.Replayable(r.Method, r.Header))
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

// appendHeader appends one header line.
func appendHeader(b []byte, name, value string) []byte { return http1.AppendField(b, name, value) }

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
