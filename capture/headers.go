package capture

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Header redaction for the HTTP recorder. What reaches the upstream and the
// client is never altered: only the copies written into the tape are.
//
//   - A header is secret when its name is one of Authorization,
//     Proxy-Authorization, Cookie, Set-Cookie, X-Api-Key, when IsSecretName
//     says so (the name contains token, secret, key, password, auth, ...),
//     or when it was added with WithRedactHeaders. (Proxy-Authorization is
//     hop-by-hop: it never reaches the upstream, but the tape notes it.)
//   - A secret value becomes "<redacted:A-B>", A-B the power-of-two class
//     of its length in bytes (1-1, 2-3, 4-7, ..., 32-63...): enough to tell an
//     empty, a short and a JWT-sized value apart, not enough to narrow a
//     guess. An empty value stays visible as "<redacted:0>". An
//     Authorization-style value keeps its scheme word when it is a known one
//     ("Bearer <redacted:32-63>").
//   - Query parameters whose names look secret ("?api_key=...", and OAuth's
//     "?code=...": IsSecretField) are redacted the same way in recorded
//     paths and URLs, and in the URL references of Location,
//     Content-Location and Referer (query and fragment).
//   - Bodies that are not messages are redacted by field (redact_body.go).
//   - WithoutRedaction turns all of this off, explicitly.

// headerValue is h.Get(name) for a name in canonical form: the first value
// of name, without canonicalizing name again on every call.
func headerValue(h http.Header, name string) string {
	if v := h[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// alwaysSecretHeaders are redacted whatever IsSecretName says.
var alwaysSecretHeaders = [...]string{"Authorization", "Proxy-Authorization", "Cookie", "Set-Cookie", "X-Api-Key"}

// authSchemes are the scheme words kept in front of a redacted credential.
var authSchemes = [...]string{"Basic", "Bearer", "Digest", "DPoP", "Negotiate", "NTLM", "Token", "MAC", "HOBA", "Mutual", "AWS4-HMAC-SHA256"}

// headerRedactor decides which header values the tape may hold.
type headerRedactor struct {
	off   bool
	extra map[string]bool // canonical header names added by WithRedactHeader
	known *sync.Map       // header name -> bool: verdicts already reached (nil: none kept)
	count *atomic.Int64   // entries in known
}

// secret reports whether the header called name is redacted.
func (r *headerRedactor) secret(name string) bool {
	if r.off {
		return false
	}
	if r.known == nil {
		return r.judge(name)
	}
	if v, ok := r.known.Load(name); ok {
		return v.(bool)
	}
	v := r.judge(name)
	if r.count.Add(1) <= maxKnownHeaders { // bounded: names come from clients
		r.known.Store(name, v)
	}
	return v
}

// maxKnownHeaders bounds the header names whose verdicts are kept.
const maxKnownHeaders = 4096

// judge applies the redaction rules to a header name.
func (r *headerRedactor) judge(name string) bool {
	for _, n := range alwaysSecretHeaders {
		if strings.EqualFold(n, name) {
			return true
		}
	}
	return IsSecretName(name) || r.extra[http.CanonicalHeaderKey(name)]
}

// headers returns h fit for the tape: a copy with secret values redacted,
// or h itself when it holds none (the caller must only read the result).
// nil or empty headers give nil.
func (r *headerRedactor) headers(h http.Header) http.Header {
	if len(h) == 0 {
		return nil
	}
	secret := false
	for name, values := range h {
		if r.secret(name) || r.urlSecret(name, values) {
			secret = true
			break
		}
	}
	if !secret {
		return h // shared: the tape encoder only reads it
	}
	out := make(http.Header, len(h))
	for name, values := range h {
		redact := redactCredential
		switch {
		case r.secret(name):
		case r.urlSecret(name, values):
			redact = r.reference
		default:
			out[name] = values // shared: the tape encoder only reads it
			continue
		}
		red := make([]string, len(values))
		for i, v := range values {
			red[i] = redact(v)
		}
		out[name] = red
	}
	return out
}

// urlHeaders are the headers whose values are URL references, whose
// query (or fragment) may carry credentials: an OAuth redirect's
// Location holds the authorization code (or, implicit flow, the access
// token in its fragment), and the next request's Referer repeats it.
var urlHeaders = [...]string{"Location", "Content-Location", "Referer"}

// urlSecret reports whether name is a URL header with a value that
// reference would change.
func (r *headerRedactor) urlSecret(name string, values []string) bool {
	if r.off || !slices.Contains(urlHeaders[:], name) {
		return false
	}
	for _, v := range values {
		if r.reference(v) != v {
			return true
		}
	}
	return false
}

// reference returns the URL reference v with the secret parameters of
// its query and of its fragment (when it is shaped like a query)
// redacted; everything else is kept byte for byte.
func (r *headerRedactor) reference(v string) string {
	rest, frag, hasFrag := strings.Cut(v, "#")
	base, query, hasQuery := strings.Cut(rest, "?")
	out := base
	if hasQuery {
		out += "?" + r.query(query)
	}
	if hasFrag {
		out += "#" + r.query(frag)
	}
	return out
}

// redactCredential redacts a header value, keeping a known scheme word.
func redactCredential(v string) string {
	if scheme, rest, ok := strings.Cut(v, " "); ok {
		for _, s := range authSchemes {
			if strings.EqualFold(s, scheme) {
				return scheme + " " + RedactedClass(strings.TrimLeft(rest, " "))
			}
		}
	}
	return RedactedClass(v)
}

// RedactedClass returns the marker that stands for a secret header or
// query value in a tape: "<redacted:A-B>" where A-B is the power-of-two
// range holding the value's length in bytes, or "<redacted:0>" when it is
// empty.
func RedactedClass(value string) string {
	n := len(value)
	if n == 0 {
		return "<redacted:0>"
	}
	lo := 1
	for lo*2 <= n {
		lo *= 2
	}
	return "<redacted:" + strconv.Itoa(lo) + "-" + strconv.Itoa(lo*2-1) + ">"
}

// query returns rawQuery with the values of secret-looking parameters
// redacted. Everything else is kept byte for byte; a parameter whose name
// cannot be unescaped is judged by its raw name.
func (r *headerRedactor) query(rawQuery string) string {
	if r.off || rawQuery == "" {
		return rawQuery
	}
	var b strings.Builder
	changed := false
	for i, part := range strings.Split(rawQuery, "&") {
		if i > 0 {
			b.WriteByte('&')
		}
		rawName, rawValue, ok := strings.Cut(part, "=")
		if ok {
			name := rawName
			if un, err := url.QueryUnescape(rawName); err == nil {
				name = un
			}
			if IsSecretField(name) {
				value := rawValue
				if un, err := url.QueryUnescape(rawValue); err == nil {
					value = un
				}
				b.WriteString(rawName)
				b.WriteByte('=')
				b.WriteString(url.QueryEscape(RedactedClass(value)))
				changed = true
				continue
			}
		}
		b.WriteString(part)
	}
	if !changed {
		return rawQuery
	}
	return b.String()
}

// requestURI returns the path and query of u for the tape, secret query
// values redacted.
func (r *headerRedactor) requestURI(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" || u.ForceQuery {
		p += "?" + r.query(u.RawQuery)
	}
	return p
}

// RedactURL returns rawURL with its password and the values of
// secret-looking query parameters redacted, for tape headers and logs. A
// value that does not parse as a URL is returned unchanged.
func RedactURL(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL
	}
	if u.User != nil {
		if pw, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), RedactedClass(pw))
		}
	}
	u.RawQuery = (&headerRedactor{}).query(u.RawQuery)
	return u.String()
}
