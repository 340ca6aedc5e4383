package http1

import (
	"net"
	"net/http"
	"net/textproto"
	"slices"
	"strconv"
	"strings"

	"github.com/mcptape/mcptape/internal/httphead"
)

// Mode says whose request WriteRequest writes, which decides the header
// fields it writes and their order.
type Mode uint8

const (
	// Forwarded is a request a proxy passes on: every field of the
	// client's but the hop-by-hop ones (RFC 9110 7.6.1: those of
	// hopByHop and those a Connection field lists), in map order; "Te:
	// trailers" is kept.
	Forwarded Mode = iota
	// Client is a request as net/http's client writes it: User-Agent
	// right after Host (the Header's first value, or net/http's default),
	// then every field in sorted order.
	Client
)

// DefaultUserAgent is the User-Agent net/http's client sends.
const DefaultUserAgent = "Go-http-client/1.1"

// maxInlineBody is the largest request body sent in the same write as its
// head (larger ones go in a second write, without a copy).
const maxInlineBody = 8 << 10

// Request is what WriteRequest sends. Its names and values must be
// valid (the callers check them, as net/http does).
type Request struct {
	Method string
	Target string // the request target as sent (origin form)
	Host   string
	// Header holds the fields to send (see Mode). Host, Content-Length,
	// Transfer-Encoding and Trailer are never written from it: the
	// framing is WriteRequest's.
	Header http.Header
	Mode   Mode
	Body   []byte
}

// WriteRequest writes r as HTTP/1.1: the request line, Host, the header
// fields, each value on its own line, trimmed of white space, a
// Content-Length when there is a body or the method is one whose requests
// carry one (POST, PUT, PATCH; as net/http sends them), the body. The
// head goes in one write with a small body, a large one in a second.
func (c *Conn) WriteRequest(r *Request) error {
	b := c.head[:0]
	b = append(b, r.Method...)
	b = append(b, ' ')
	b = append(b, r.Target...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, r.Host...)
	b = append(b, "\r\n"...)
	if r.Mode == Client {
		ua := DefaultUserAgent
		if vs := r.Header["User-Agent"]; len(vs) > 0 {
			ua = vs[0]
		}
		if ua != "" {
			b = AppendField(b, "User-Agent", ua)
		}
	}
	if len(r.Body) > 0 || r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(r.Body)), 10)
		b = append(b, "\r\n"...)
	}
	if r.Mode == Client {
		b = c.appendSorted(b, r.Header)
	} else {
		b = appendForwarded(b, r.Header)
	}
	b = append(b, "\r\n"...)
	var n int64
	var err error
	if len(r.Body) <= maxInlineBody {
		b = append(b, r.Body...)
		var m int
		m, err = c.NC.Write(b)
		n = int64(m)
	} else {
		bufs := net.Buffers{b, r.Body}
		n, err = bufs.WriteTo(c.NC)
	}
	c.written += n
	if cap(b) <= 64<<10 {
		c.head = b[:0]
	}
	return err
}

// field is one header name with its values.
type field struct {
	name   string
	values []string
}

// appendSorted appends the fields of h in sorted order, less those of the
// framing and User-Agent (see Client). The values are taken with their
// names as the map is walked: no look-up per name after the sort.
func (c *Conn) appendSorted(b []byte, h http.Header) []byte {
	fs := c.fields[:0]
	for k, vs := range h {
		switch k {
		case "Host", "User-Agent", "Content-Length", "Transfer-Encoding", "Trailer":
			continue
		}
		fs = append(fs, field{k, vs})
	}
	slices.SortFunc(fs, byName)
	for _, f := range fs {
		for _, v := range f.values {
			b = AppendField(b, f.name, v)
		}
	}
	clear(fs)
	c.fields = fs[:0]
	return b
}

func byName(a, b field) int { return strings.Compare(a.name, b.name) }

// appendForwarded appends the fields of h a proxy passes on (see
// Forwarded).
func appendForwarded(b []byte, h http.Header) []byte {
	conn := h["Connection"]
	for name, values := range h {
		if forwardSkipped(name) || connectionListed(conn, name) {
			continue
		}
		for _, v := range values {
			b = AppendField(b, name, v)
		}
	}
	if httphead.HasToken(h["Te"], "trailers") {
		b = append(b, "Te: trailers\r\n"...)
	}
	return b
}

// AppendField appends the header line "name: value", the value trimmed of
// spaces and tabs.
func AppendField(b []byte, name, value string) []byte {
	b = append(b, name...)
	b = append(b, ": "...)
	b = append(b, httphead.TrimOWS(value)...)
	return append(b, "\r\n"...)
}

// hopByHop are the headers that concern one connection only (RFC 9110
// 7.6.1): never forwarded. Te's "trailers" is passed on.
var hopByHop = [...]string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// forwardSkipped reports whether the request header name is not passed
// on as it is: hop-by-hop headers, and the framing headers WriteRequest
// writes itself.
func forwardSkipped(name string) bool {
	if name == "Content-Length" || name == "Host" {
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

// RemoveHopByHop deletes the hop-by-hop headers of a response a proxy
// passes on: those of hopByHop, and those its Connection header lists.
func RemoveHopByHop(h http.Header) {
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
