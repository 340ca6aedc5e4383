package capture

// The options of the HTTP recording proxy (HTTPOption): what NewHTTPProxy
// is configured with, each checked when it is applied.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"regexp"
	"time"

	"github.com/mcptape/mcptape/internal/httphead"
)

// HTTPOption configures an HTTPProxy. A bad value makes NewHTTPProxy fail.
type HTTPOption func(*httpOptions) error

type httpOptions struct {
	preserveHost bool
	insecure     bool
	redact       headerRedactor
	maxBody      int
	maxDecoded   int // WithMaxDecoded
	decodeBudget int // WithDecodeBudget
	transport    http.RoundTripper
	listenNames  []string
	now          func() time.Time
	warnf        func(string, ...any)
	debugf       func(string, ...any)
	grace        time.Duration
	cut          context.Context // WithShutdownCut; nil: none
	headTimeout  time.Duration   // for a request head, whole (ReadHeaderTimeout)
	netHTTPOnly  bool            // tests: no lean path
	sample       float64         // WithSample
	seed         uint64
	sampling     bool
	recordOnly   []*regexp.Regexp // WithMethodFilter
	skip         []*regexp.Regexp
	tls          *tls.Config  // WithTLS: the listener speaks HTTPS
	obs          HTTPObserver // WithObserver
	watchHook    func()       // tests: called at each sweep of the lean path's watch loop
}

// WithPreserveHost forwards the client's Host header even when it names the
// proxy itself (by default such a Host becomes the upstream's host).
func WithPreserveHost(on bool) HTTPOption {
	return func(o *httpOptions) error { o.preserveHost = on; return nil }
}

// WithInsecureTLS skips the verification of the upstream's certificate
// (for self-signed test servers). It applies to the default transport and
// cannot be combined with WithTransport.
func WithInsecureTLS(on bool) HTTPOption {
	return func(o *httpOptions) error { o.insecure = on; return nil }
}

// WithRedactHeaders adds header names whose values the tape must not hold,
// on top of the default rules (see RedactedClass). Names are matched
// case-insensitively; an empty or malformed name is an error.
func WithRedactHeaders(names ...string) HTTPOption {
	return func(o *httpOptions) error {
		for _, n := range names {
			if !httphead.IsToken(n) {
				return fmt.Errorf("redact header %q: not a valid header name", n)
			}
			if o.redact.extra == nil {
				o.redact.extra = make(map[string]bool)
			}
			o.redact.extra[http.CanonicalHeaderKey(n)] = true
		}
		return nil
	}
}

// WithoutRedaction records every header and query value as it is. Use it
// only for tapes that stay with their owner.
func WithoutRedaction() HTTPOption {
	return func(o *httpOptions) error { o.redact.off = true; return nil }
}

// WithMaxBody bounds the bytes recorded of one HTTP body or SSE event
// (default transport.DefaultMaxFrame). Longer ones are forwarded whole and
// recorded cut, followed by an "error" event saying so. It must be positive.
func WithMaxBody(n int) HTTPOption {
	return func(o *httpOptions) error {
		if n <= 0 {
			return fmt.Errorf("max body %d: must be positive", n)
		}
		o.maxBody = n
		return nil
	}
}

// WithTransport sets the round tripper that reaches the upstream (default:
// a clone of http.DefaultTransport with compression left to the client and
// enough idle connections for many sessions).
func WithTransport(rt http.RoundTripper) HTTPOption {
	return func(o *httpOptions) error {
		if rt == nil {
			return errors.New("transport: must not be nil")
		}
		o.transport = rt
		return nil
	}
}

// WithListenAddr names an address ("host:port") under which clients reach
// the proxy, beyond the address of the connection itself: a Host header
// equal to it is replaced by the upstream's host.
func WithListenAddr(addr string) HTTPOption {
	return func(o *httpOptions) error {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return fmt.Errorf("listen address %q: %w", addr, err)
		}
		o.listenNames = append(o.listenNames, addr)
		return nil
	}
}

// WithHTTPClock sets the clock that stamps records (tests).
func WithHTTPClock(now func() time.Time) HTTPOption {
	return func(o *httpOptions) error {
		if now == nil {
			return errors.New("clock: must not be nil")
		}
		o.now = now
		return nil
	}
}

// WithLogf sets where problems that do not stop the proxy (warnf: a failed
// tape write, an endpoint the proxy cannot rewrite) and lifecycle details
// (debugf) go; nil discards. Both may be called concurrently.
func WithLogf(warnf, debugf func(format string, args ...any)) HTTPOption {
	return func(o *httpOptions) error { o.warnf, o.debugf = warnf, debugf; return nil }
}

// WithShutdownGrace sets how long Serve lets open exchanges finish after
// its context ends (default DefaultShutdownGrace); it must not be negative.
func WithShutdownGrace(d time.Duration) HTTPOption {
	return func(o *httpOptions) error {
		if d < 0 {
			return fmt.Errorf("shutdown grace %v: must not be negative", d)
		}
		o.grace = d
		return nil
	}
}

// withNetHTTPOnly makes Serve use net/http for every connection, without
// the lean path (tests of that path).
func withNetHTTPOnly() HTTPOption {
	return func(o *httpOptions) error { o.netHTTPOnly = true; return nil }
}

// withWatchHook makes the lean path's watch loop call f each time it
// wakes and sweeps the connections (tests).
func withWatchHook(f func()) HTTPOption {
	return func(o *httpOptions) error { o.watchHook = f; return nil }
}

// withHeadTimeout sets the time a client has for a request head, from its
// first byte (from the connection's start for the first one), on both
// paths (default leanHeaderTimeout: tests).
func withHeadTimeout(d time.Duration) HTTPOption {
	return func(o *httpOptions) error { o.headTimeout = d; return nil }
}
