package httphead

import (
	"math"
	"net/http"
	"net/textproto"
	"strings"
)

// CutLine cuts the first CRLF-ended line off s; ok is false when there is
// none or it ends in a bare LF. (A CR inside the line is left for
// SplitHeaderLine or the caller to refuse.)
func CutLine(s string) (line, rest string, ok bool) {
	i := strings.IndexByte(s, '\n')
	if i < 1 || s[i-1] != '\r' {
		return "", "", false
	}
	return s[:i-1], s[i+1:], true
}

// SplitRequestLine splits a request line at its first two spaces, as
// net/http does; ok is false when it has fewer than two. The parts are not
// checked.
func SplitRequestLine(line string) (method, target, proto string, ok bool) {
	i := indexByte(line, ' ')
	if i < 0 {
		return "", "", "", false
	}
	j := indexByte(line[i+1:], ' ')
	if j < 0 {
		return "", "", "", false
	}
	return line[:i], line[i+1 : i+1+j], line[i+2+j:], true
}

// ParseStatusLine parses a status line without its line end, "HTTP/1.1" or
// "HTTP/1.0", one space, a status code of three digits from 100 to 999,
// then the end or a space and a reason of any bytes. It returns the minor
// version, the code and the status (code and reason, as http.Response's
// Status); ok is false for any other line, such as one with a code below
// 100 or two spaces before the code, which net/http reads.
func ParseStatusLine(line string) (minor, code int, status string, ok bool) {
	if len(line) < 12 || line[:7] != "HTTP/1." || line[8] != ' ' || len(line) > 12 && line[12] != ' ' {
		return 0, 0, "", false
	}
	m, a, b, c := uint(line[7])-'0', uint(line[9])-'1', uint(line[10])-'0', uint(line[11])-'0'
	if m > 1 || a > 8 || b > 9 || c > 9 {
		return 0, 0, "", false
	}
	return int(m), int(a+1)*100 + int(b*10+c), line[9:], true
}

// SplitHeaderLine splits "name:value" into the canonical name and the
// value without the white space around it. ok is false for a name that is
// not a token directly followed by ':' (a line starting with white space,
// obs-fold, included) and for a value with a byte net/http refuses (see
// ValidValue).
func SplitHeaderLine(line string) (name, value string, ok bool) {
	i := 0
	upper, canonical := true, true
	for ; i < len(line) && tokenBytes[line[i]]; i++ {
		c := line[i]
		if upper && 'a' <= c && c <= 'z' || !upper && 'A' <= c && c <= 'Z' {
			canonical = false
		}
		upper = c == '-'
	}
	if i == 0 || i == len(line) || line[i] != ':' {
		return "", "", false
	}
	v := line[i+1:]
	if !ValidValue(v) {
		return "", "", false
	}
	name = line[:i]
	if !canonical {
		name = CanonicalName(name)
	}
	return name, TrimOWS(v), true
}

// ValidValue reports whether s may be (part of) a field value as net/http
// reads one: no control byte but HTAB, no DEL.
func ValidValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// CanonicalName returns the canonical form of the header name s, made of
// token bytes and not canonical (SplitHeaderLine calls it only then), as
// http.CanonicalHeaderKey does: a common name without allocating, a new
// string otherwise.
func CanonicalName(s string) string {
	var buf [32]byte
	if len(s) > len(buf) {
		return textproto.CanonicalMIMEHeaderKey(s)
	}
	b := buf[:len(s)]
	upper := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if upper && 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		} else if !upper && 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
		upper = c == '-'
	}
	if name, ok := commonNames[string(b)]; ok {
		return name
	}
	return string(b)
}

// commonNames interns the header names peers commonly send in lower case
// (HTTP/2-minded and Node peers do). It is never written after init.
var commonNames = func() map[string]string {
	m := map[string]string{}
	for _, n := range []string{
		"Accept", "Accept-Encoding", "Accept-Language", "Authorization", "Cache-Control", "Connection",
		"Content-Length", "Content-Type", "Cookie", "Host", "Keep-Alive", "Last-Event-Id", "Mcp-Protocol-Version",
		"Mcp-Session-Id", "Origin", "Pragma", "Referer", "Sec-Fetch-Mode", "Te", "Transfer-Encoding", "Trailer",
		"Upgrade", "Expect", "User-Agent", "X-Api-Key", "Traceparent", "Tracestate",
	} {
		m[n] = n
	}
	return m
}()

// AddValue adds value to h[name]. A name's first value gets a one-value
// slice cut from *pool while it lasts (so that the values of a head share
// one allocation), a slice of its own after; a name's further values are
// appended.
func AddValue(h http.Header, name, value string, pool *[]string) {
	if vv := h[name]; vv != nil || len(*pool) == 0 {
		h[name] = append(vv, value)
		return
	}
	vv := (*pool)[:1:1]
	*pool = (*pool)[1:]
	vv[0] = value
	h[name] = vv
}

// TokenByte reports whether c may be part of a token (RFC 9110 tchar).
func TokenByte(c byte) bool { return tokenBytes[c] }

// tokenBytes tells the bytes of tokens. It is never written after init.
var tokenBytes = func() (t [256]bool) {
	for c := 0; c < 0x80; c++ {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			indexByte("!#$%&'*+-.^_`|~", byte(c)) >= 0
	}
	return t
}()

// IsToken reports whether s is a non-empty token.
func IsToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if !tokenBytes[s[i]] {
			return false
		}
	}
	return s != ""
}

// TrimOWS trims spaces and tabs off both ends of s.
func TrimOWS(s string) string {
	for s != "" && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for s != "" && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// EqualFold reports whether a and b are equal under ASCII case folding
// (a byte of 0x80 or more equals only itself), as net/http compares
// tokens.
func EqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// HasToken reports whether the comma-separated values hold token, each
// element trimmed of white space and compared with EqualFold, as net/http
// looks for "close" in a Connection field.
func HasToken(values []string, token string) bool {
	for _, v := range values {
		for {
			elem, more, found := cutByte(v, ',')
			if EqualFold(TrimOWS(elem), token) {
				return true
			}
			if !found {
				break
			}
			v = more
		}
	}
	return false
}

// CloseAfter reports whether the connection closes after a response with
// header h, of HTTP/1.minor (0 or 1), as http.ReadResponse decides: for
// HTTP/1.1 when a Connection field holds "close", a field it then deletes
// from h (as http.ReadResponse does); for HTTP/1.0 unless one holds
// "keep-alive" (and none "close"), leaving h as it is.
func CloseAfter(h http.Header, minor int) bool {
	conn := h["Connection"]
	hasClose := HasToken(conn, "close")
	if minor == 0 {
		return hasClose || !HasToken(conn, "keep-alive")
	}
	if hasClose {
		delete(h, "Connection")
	}
	return hasClose
}

// PragmaCacheControl adds "Cache-Control: no-cache" to h when its first
// Pragma value is "no-cache" and it has no Cache-Control field, as
// net/http does for requests and responses of HTTP/1.0 caches.
func PragmaCacheControl(h http.Header) {
	if p := h["Pragma"]; len(p) > 0 && p[0] == "no-cache" && h["Cache-Control"] == nil {
		h["Cache-Control"] = []string{"no-cache"}
	}
}

// ParseDigits parses a non-empty string of decimal digits (no sign, no
// white space) as strconv.ParseUint(s, 10, 63) does: ok is false for any
// other string and for a number above math.MaxInt64.
func ParseDigits(s string) (n int64, ok bool) {
	var u uint64
	for i := 0; i < len(s); i++ {
		c := uint64(s[i] - '0')
		if c > 9 || u > (math.MaxInt64-c)/10 {
			return 0, false
		}
		u = u*10 + c
	}
	return int64(u), s != ""
}

func cutByte(s string, c byte) (before, after string, found bool) {
	if i := indexByte(s, c); i >= 0 {
		return s[:i], s[i+1:], true
	}
	return s, "", false
}

// indexByte is strings.IndexByte for the short strings of a head, where a
// loop the compiler inlines beats a call.
func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

// MaxKeptText bounds the head text a reader keeps for Text: longer heads
// are rare and get a string of their own every time.
const MaxKeptText = 4 << 10

// Text returns the head b as a string, the text the reader's request or
// response is made of: last (the text of the head the reader read before
// on the same connection) when b holds the same bytes, else a new string.
// A connection's heads repeat (a session's requests differ, if at all, in
// Content-Length; an upstream's answers in Date, once a second): giving
// the last text again spares an allocation and a copy. Strings are
// immutable, so what still refers to the last text is not disturbed.
func Text(last string, b []byte) string {
	if len(last) == len(b) && last == string(b) { // compares without a copy
		return last
	}
	return string(b)
}
