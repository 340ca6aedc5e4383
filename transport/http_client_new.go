package transport

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// DefaultMaxConns is the number of idle keep-alive connections per host a
// client made by NewHTTPClient(0) keeps.
const DefaultMaxConns = 256

// NewHTTPClient returns an HTTP client tuned for many concurrent MCP
// sessions to the same servers, to share between connections with
// WithHTTPClient: up to maxConns idle keep-alive connections per host (0
// means DefaultMaxConns) so that sessions reuse connections instead of
// opening new ones, no limit on open connections (every open event stream
// holds one over HTTP/1.1) unless WithMaxConnsPerHost sets one, HTTP/2
// when TLS offers it, no response compression (event streams must not be
// buffered; frames stay byte-exact), connect and TLS handshake timeouts,
// and no overall timeout (streams live long: bound requests with their
// context).
//
// Plain-HTTP requests without a proxy take a lean HTTP/1.1 path: pooled
// keep-alive connections each used synchronously by the goroutine whose
// request it carries, with no goroutine hand-off per request (the cost
// that dominates a load generator's CPU time with net/http's Transport).
// Everything else goes through a net/http Transport.
func NewHTTPClient(maxConns int, opts ...ClientOption) (*http.Client, error) {
	if maxConns < 0 {
		return nil, fmt.Errorf("transport: NewHTTPClient: %d connections is negative", maxConns)
	}
	if maxConns == 0 {
		maxConns = DefaultMaxConns
	}
	var co clientOptions
	for _, opt := range opts {
		if opt == nil {
			return nil, errors.New("transport: NewHTTPClient: nil option")
		}
		if err := opt(&co); err != nil {
			return nil, fmt.Errorf("transport: NewHTTPClient: %w", err)
		}
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          0, // no global bound; per host below
		MaxIdleConnsPerHost:   maxConns,
		MaxConnsPerHost:       co.maxOpen,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true,
	}
	if co.insecure {
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // asked for with --insecure
	}
	if co.netHTTP {
		return &http.Client{Transport: tr}, nil
	}
	return &http.Client{Transport: newLeanTransport(tr, dialer.DialContext)}, nil
}

// ClientOption configures a client made by NewHTTPClient; a bad value is
// an error from NewHTTPClient.
type ClientOption func(*clientOptions) error

type clientOptions struct {
	maxOpen  int  // open connections per host, 0: no limit
	netHTTP  bool // net/http's Transport only
	insecure bool // no verification of the server's certificate
}

// WithMaxConnsPerHost bounds the connections open to one host at a time
// (dialling, in use or idle): requests beyond wait for one to free up. 0
// means no bound (the default); it must not be negative. The lean path's
// pool and the net/http Transport behind it (https, bodies over 64 KiB,
// odd heads) are bounded separately: a client that sends both kinds to
// one host may hold up to twice n connections there.
func WithMaxConnsPerHost(n int) ClientOption {
	return func(o *clientOptions) error {
		if n < 0 {
			return fmt.Errorf("%d connections per host is negative", n)
		}
		o.maxOpen = n
		return nil
	}
}

// WithInsecureTLS makes the client accept any certificate from an https
// server, for self-signed test servers ("--insecure").
func WithInsecureTLS() ClientOption {
	return func(o *clientOptions) error {
		o.insecure = true
		return nil
	}
}

// WithNetHTTPOnly makes the client send every request through net/http's
// Transport, without the lean HTTP/1.1 path (for comparisons, or a server
// the lean path does not suit).
func WithNetHTTPOnly() ClientOption {
	return func(o *clientOptions) error {
		o.netHTTP = true
		return nil
	}
}
