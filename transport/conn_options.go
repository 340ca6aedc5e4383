package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/mcptape/mcptape/internal/httphead"
)

// Option configures a connection made by DialStdio, DialHTTP,
// DialLegacySSE or DialWebSocket. A bad value, or an option that does not apply to the
// transport being dialled, is an error from the Dial function.
type Option func(*options) error

// DefaultGrace is how long Close waits by default at each step: after
// closing a stdio server's stdin before SIGTERM, after SIGTERM before
// SIGKILL, and for the answer to an HTTP DELETE.
const DefaultGrace = 2 * time.Second

// optKind says which transports an option applies to.
type optKind uint8

const (
	forStdio optKind = 1 << iota
	forHTTP
	forLegacy
	forWS
	forAll = forStdio | forHTTP | forLegacy | forWS
)

type options struct {
	grace    time.Duration
	stopNow  context.Context // WithStopNow; never nil
	maxFrame int

	// stdio
	env    []string
	dir    string
	stderr io.Writer

	// HTTP and legacy SSE
	client   *http.Client
	header   http.Header
	version  string
	getStrm  bool
	noDelete bool
	noHeads  bool // WithoutAnswerHeaders
	// streamPath: WithStreamPath
	streamPath string

	// WebSocket
	wsProtos    []string
	wsProtosSet bool

	// WebSocket and legacy SSE: WithDialTimeout
	dialTimeout time.Duration

	used []usedOption // which options were given, to reject misplaced ones
}

type usedOption struct {
	name string
	kind optKind
}

// newOptions applies opts for a transport of kind k (with name for errors).
func newOptions(dial string, k optKind, opts []Option) (*options, error) {
	o := &options{grace: DefaultGrace, stopNow: context.Background(), maxFrame: DefaultMaxFrame}
	for _, opt := range opts {
		if opt == nil {
			return nil, fmt.Errorf("transport: %s: nil option", dial)
		}
		if err := opt(o); err != nil {
			return nil, fmt.Errorf("transport: %s: %w", dial, err)
		}
	}
	for _, u := range o.used {
		if u.kind&k == 0 {
			return nil, fmt.Errorf("transport: %s: option %s does not apply to this transport", dial, u.name)
		}
	}
	return o, nil
}

func (o *options) use(name string, k optKind) { o.used = append(o.used, usedOption{name, k}) }

// WithGrace sets how long Close waits at each step (default DefaultGrace):
// after closing a stdio server's stdin before SIGTERM, after SIGTERM before
// SIGKILL, and for the answer to the DELETE that ends an HTTP session. It
// must be positive.
func WithGrace(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("grace %v is not positive", d)
		}
		o.grace = d
		o.use("WithGrace", forAll)
		return nil
	}
}

// WithStopNow sets a context whose end cuts Close's graces short: a stdio
// server still running is killed (SIGKILL to its group) at once, an HTTP
// session's DELETE and a WebSocket's closing handshake are not waited for.
// The caller was told to stop now (a second Ctrl-C). Close still returns
// only once the connection is down.
func WithStopNow(ctx context.Context) Option {
	return func(o *options) error {
		if ctx == nil {
			return errors.New("WithStopNow: nil context")
		}
		o.stopNow = ctx
		o.use("WithStopNow", forAll)
		return nil
	}
}

// WithMaxFrame bounds the bytes kept for one received frame (default
// DefaultMaxFrame); longer frames are delivered cut, flagged Truncated. It
// must be positive.
func WithMaxFrame(n int) Option {
	return func(o *options) error {
		if n <= 0 {
			return fmt.Errorf("maximum frame size %d is not positive", n)
		}
		o.maxFrame = n
		o.use("WithMaxFrame", forAll)
		return nil
	}
}

// WithEnv adds "KEY=value" entries to the environment the stdio server
// inherits (a later entry for the same key wins).
func WithEnv(kv ...string) Option {
	return func(o *options) error {
		for _, e := range kv {
			if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
				return fmt.Errorf("environment entry %q is not KEY=value", e)
			}
		}
		o.env = append(o.env, kv...)
		o.use("WithEnv", forStdio)
		return nil
	}
}

// WithDir sets the stdio server's working directory.
func WithDir(dir string) Option {
	return func(o *options) error {
		if dir == "" {
			return errors.New("working directory is empty")
		}
		o.dir = dir
		o.use("WithDir", forStdio)
		return nil
	}
}

// WithStderr sends the stdio server's standard error to w (by default it
// is discarded). A slow w does not slow the server down until the pipe's
// buffer fills.
func WithStderr(w io.Writer) Option {
	return func(o *options) error {
		if w == nil {
			return errors.New("stderr writer is nil")
		}
		o.stderr = w
		o.use("WithStderr", forStdio)
		return nil
	}
}

// WithHTTPClient makes the connection use c. Share one client, made by
// NewHTTPClient, between the many connections of a load test. Without this
// option each connection makes a client of its own.
func WithHTTPClient(c *http.Client) Option {
	return func(o *options) error {
		if c == nil {
			return errors.New("HTTP client is nil")
		}
		o.client = c
		o.use("WithHTTPClient", forHTTP|forLegacy|forWS)
		return nil
	}
}

// WithHeader adds headers to every HTTP request of the connection (for
// example Authorization). The header is copied. A Host header sets the
// requests' Host (servers built on the TypeScript SDK check it).
func WithHeader(h http.Header) Option {
	return func(o *options) error {
		for k := range h {
			if !httphead.IsToken(k) {
				return fmt.Errorf("header name %q is not a valid HTTP field name", k)
			}
		}
		if o.header == nil {
			o.header = make(http.Header, len(h))
		}
		for k, v := range h {
			o.header[http.CanonicalHeaderKey(k)] = append([]string(nil), v...)
		}
		o.use("WithHeader", forHTTP|forLegacy|forWS)
		return nil
	}
}

// WithProtocolVersion sets the MCP-Protocol-Version header sent on every
// request but initialize until an initialize answer gives the negotiated
// version (which then replaces it). A version of 2026-07-28 or later also
// turns on the headers derived from the body (Mcp-Method, Mcp-Name) for
// every request. The version must look like YYYY-MM-DD.
func WithProtocolVersion(v string) Option {
	return func(o *options) error {
		if !validVersion(v) {
			return fmt.Errorf("protocol version %q is not of the form YYYY-MM-DD", v)
		}
		o.version = v
		o.use("WithProtocolVersion", forHTTP)
		return nil
	}
}

// WithGetStream makes a Streamable HTTP connection open the session's GET
// stream by itself, in the background, as soon as a
// notifications/initialized POST has been accepted (see
// HTTPConn.OpenGetStream and HTTPConn.GetStream).
func WithGetStream() Option {
	return func(o *options) error {
		o.getStrm = true
		o.use("WithGetStream", forHTTP)
		return nil
	}
}

// WithoutDelete makes Close leave the session open on the server instead
// of sending DELETE (as the MCP Inspector does).
func WithoutDelete() Option {
	return func(o *options) error {
		o.noDelete = true
		o.use("WithoutDelete", forHTTP)
		return nil
	}
}

// WithoutAnswerHeaders makes the exchanges of Send keep no answer headers
// (their Header stays nil; Status and ContentType are set as ever), so
// that the memory an answer's head is parsed into can be used again for
// a later answer on the same keep-alive connection: a load generator,
// which reads no answer headers, saves allocations on every request.
func WithoutAnswerHeaders() Option {
	return func(o *options) error {
		o.noHeads = true
		o.use("WithoutAnswerHeaders", forHTTP|forLegacy)
		return nil
	}
}

// WithDialTimeout bounds the wait of a dial on the server: by
// DialWebSocket for the answer to the upgrade, by DialLegacySSE for the
// stream's headers and its endpoint event (a server that takes the
// request and never answers it would otherwise hold the dial until its
// context ends). d must be positive. The bound covers the dial only, not
// the connection it makes.
func WithDialTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("dial timeout %v is not positive", d)
		}
		o.dialTimeout = d
		o.use("WithDialTimeout", forWS|forLegacy)
		return nil
	}
}

// dialContext returns ctx bounded by WithDialTimeout, if given.
func (o *options) dialContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if o.dialTimeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, o.dialTimeout)
}

// validVersion reports whether v looks like an MCP protocol version,
// YYYY-MM-DD.
func validVersion(v string) bool {
	if len(v) != 10 || v[4] != '-' || v[7] != '-' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if i != 4 && i != 7 && (v[i] < '0' || v[i] > '9') {
			return false
		}
	}
	return true
}
