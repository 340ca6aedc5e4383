package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/mcptape/mcptape/internal/httphead"
	"github.com/mcptape/mcptape/transport"
)

// Defaults of Run.
const (
	// DefaultTimeout bounds the wait for one answer.
	DefaultTimeout = 30 * time.Second
	// DefaultProtocolVersion is the version sessions negotiate.
	DefaultProtocolVersion = "2025-06-18"
	// DefaultMaxInFlight bounds the requests in flight in the open model.
	DefaultMaxInFlight = 10000
	// DefaultSetupConcurrency is how many sessions the open model sets up
	// at once before the clock starts.
	DefaultSetupConcurrency = 64
	// MaxSessions bounds the sessions of a run, and in the closed model
	// its requests in flight (sessions times in flight per session): a
	// value past it is a typo that would take the machine's memory.
	MaxSessions = 1_000_000
)

// Target says where the server is: exactly one of URL (Streamable HTTP),
// SSE (legacy HTTP+SSE, the /sse URL) or Command (a stdio server started
// once per session).
type Target struct {
	URL     string
	SSE     string
	Command []string
}

// String describes the target for reports.
func (t Target) String() string {
	switch {
	case t.URL != "":
		return t.URL
	case t.SSE != "":
		return "sse " + t.SSE
	default:
		return fmt.Sprintf("stdio %q", t.Command)
	}
}

func (t Target) check() error {
	n := 0
	for _, set := range []bool{t.URL != "", t.SSE != "", len(t.Command) > 0} {
		if set {
			n++
		}
	}
	if n != 1 {
		return errors.New("target: give exactly one of a URL, an SSE URL or a command")
	}
	return nil
}

// Option configures Run. A bad value is an error from Run.
type Option func(*options) error

type options struct {
	sessions    int
	inflight    int
	think       time.Duration
	rate        float64
	maxInflight int
	ramp        time.Duration
	duration    time.Duration
	requests    int64
	timeout     time.Duration
	version     string
	progress    bool
	header      http.Header
	getStream   bool
	streamPath  string // WithStreamPath
	client      *http.Client
	maxConns    int
	batch       int
	notice      func(string)
	cancelAfter time.Duration
	cancelRatio float64
	hlog        io.Writer
	setup       []Call
	hlogEvery   time.Duration
	tick        time.Duration
	onTick      func(Live)
	onExit      string
	insecure    bool
	wsProtos    []string // WithWSSubprotocols; nil: the transport's default
	stages      []Stage
	stageFrom   float64        // target before the first stage
	stall       func(k uint64) // tests: called as the open model sends arrival k (a generator stall)
	upHook      func(*session) // tests: called by a request once its session is up, before it is sent
	interval    time.Duration
	results     *resultsWriter
	grace       time.Duration
	stopNow     context.Context // WithStopNow; nil: none
	stderr      io.Writer       // WithServerStderr
}

// WithGrace sets how long closing a session waits at each step (default
// transport.DefaultGrace): for a stdio server after closing its stdin
// before SIGTERM, and after SIGTERM before SIGKILL (internal/proc's
// policy); over HTTP for the answer to the session's DELETE.
func WithGrace(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("grace %v: must be positive", d)
		}
		o.grace = d
		return nil
	}
}

// WithStopNow sets a context whose end cuts the graces of closing the
// sessions short (transport.WithStopNow): a stdio server still running is
// killed at once, a DELETE not waited for. mcptape load ends it at a
// second Ctrl-C, the run's context having ended at the first.
func WithStopNow(ctx context.Context) Option {
	return func(o *options) error {
		if ctx == nil {
			return errors.New("stop-now context: nil")
		}
		o.stopNow = ctx
		return nil
	}
}

// WithSessions sets the number of sessions (default 1).
func WithSessions(n int) Option {
	return func(o *options) error {
		if n < 1 || n > MaxSessions {
			return fmt.Errorf("sessions %d: must be from 1 to %d", n, MaxSessions)
		}
		o.sessions = n
		return nil
	}
}

// WithInFlight sets the closed model's requests in flight per session
// (default 1).
func WithInFlight(k int) Option {
	return func(o *options) error {
		if k < 1 || k > MaxSessions {
			return fmt.Errorf("in flight %d: must be from 1 to %d", k, MaxSessions)
		}
		o.inflight = k
		return nil
	}
}

// WithThink sets the closed model's pause between an answer and the next
// request of the same session.
func WithThink(d time.Duration) Option {
	return func(o *options) error {
		if d < 0 {
			return fmt.Errorf("think time %v is negative", d)
		}
		o.think = d
		return nil
	}
}

// WithRate selects the open model: perSecond arrivals per second, spread
// over the sessions round-robin, latency measured from each arrival's
// intended time.
func WithRate(perSecond float64) Option {
	return func(o *options) error {
		if !(perSecond > 0) || perSecond > 1e7 {
			return fmt.Errorf("rate %v/s: must be above 0 and at most 1e7", perSecond)
		}
		o.rate = perSecond
		return nil
	}
}

// WithMaxInFlight bounds the open model's requests in flight (default
// DefaultMaxInFlight); arrivals beyond it are not sent and are counted as
// dropped.
func WithMaxInFlight(n int) Option {
	return func(o *options) error {
		if n < 1 {
			return fmt.Errorf("max in flight %d: must be at least 1", n)
		}
		o.maxInflight = n
		return nil
	}
}

// WithRamp spreads the start: in the closed model sessions start evenly
// over d; in the open model the rate grows linearly from 0 over d.
func WithRamp(d time.Duration) Option {
	return func(o *options) error {
		if d < 0 {
			return fmt.Errorf("ramp %v is negative", d)
		}
		o.ramp = d
		return nil
	}
}

// WithDuration stops starting requests after d.
func WithDuration(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("duration %v is not positive", d)
		}
		o.duration = d
		return nil
	}
}

// WithRequests stops after n requests (session setup excluded).
func WithRequests(n int64) Option {
	return func(o *options) error {
		if n < 1 {
			return fmt.Errorf("requests %d: must be at least 1", n)
		}
		o.requests = n
		return nil
	}
}

// WithTimeout bounds the wait for each answer (default DefaultTimeout),
// that of session setup included.
func WithTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("timeout %v is not positive", d)
		}
		o.timeout = d
		return nil
	}
}

// WithProtocolVersion sets the protocol version sessions ask for (default
// DefaultProtocolVersion). From 2026-07-28 sessions are stateless: no
// handshake, protocol metadata in every request.
func WithProtocolVersion(v string) Option {
	return func(o *options) error {
		if len(v) != 10 || v[4] != '-' || v[7] != '-' {
			return fmt.Errorf("protocol version %q is not of the form YYYY-MM-DD", v)
		}
		o.version = v
		return nil
	}
}

// WithProgress attaches a progressToken to every call and reports the
// progress notifications.
func WithProgress() Option {
	return func(o *options) error { o.progress = true; return nil }
}

// WithHeader adds headers to every HTTP request.
func WithHeader(h http.Header) Option {
	return func(o *options) error {
		o.header = h.Clone()
		return nil
	}
}

// WithStreamPath makes every Streamable HTTP session read the server's
// messages from an event stream it opens with GET at path, the HTTP
// dialect of the LangGraph MCP server's documentation (/mcp/stream:
// POSTs answered with plain JSON, or 202 with the answer, streamed or
// not, on that stream; see transport.WithStreamPath). Such a server may
// send every answer on every session's stream, so the sessions' request
// ids are kept apart: session n counts its ids from n×2^32.
func WithStreamPath(path string) Option {
	return func(o *options) error {
		if path == "" {
			return errors.New("stream path is empty")
		}
		o.streamPath = path
		return nil
	}
}

// WithGetStream makes every Streamable HTTP session open its GET stream.
func WithGetStream() Option {
	return func(o *options) error { o.getStream = true; return nil }
}

// WithHTTPClient makes every session use c instead of a client made by
// transport.NewHTTPClient for the run.
func WithHTTPClient(c *http.Client) Option {
	return func(o *options) error {
		if c == nil {
			return errors.New("HTTP client is nil")
		}
		o.client = c
		return nil
	}
}

// WithMaxConns bounds the HTTP connections the run's client opens to the
// server (default 0: no bound, one per request in flight over HTTP/1.1).
// Requests beyond it wait for a connection, and that wait counts in their
// latency. It bounds the generator's memory with thousands of sessions.
// Each session's stream (WithGetStream, WithStreamPath, a legacy SSE
// stream, a tape's GET stream) holds one connection more, on top of the
// bound. It does not apply with WithHTTPClient. Requests over plain HTTP with
// bodies over 64 KiB go through a second pool with the same bound (see
// transport.WithMaxConnsPerHost).
func WithMaxConns(n int) Option {
	return func(o *options) error {
		if n < 0 {
			return fmt.Errorf("max connections %d is negative", n)
		}
		o.maxConns = n
		return nil
	}
}

// WithInsecureTLS makes the run's HTTP client accept any certificate from
// an https server (self-signed test servers). It does not apply with
// WithHTTPClient.
func WithInsecureTLS() Option {
	return func(o *options) error { o.insecure = true; return nil }
}

// WithWSSubprotocols sets the subprotocols offered to a ws:// or wss://
// server (see transport.WithWSSubprotocols): none when called without any.
// Without it the transport's default, "mcp", is offered. Each name must
// be an HTTP token.
func WithWSSubprotocols(protos ...string) Option {
	return func(o *options) error {
		for _, p := range protos {
			if !httphead.IsToken(p) {
				return fmt.Errorf("websocket subprotocol %q is not a token", p)
			}
		}
		o.wsProtos = append([]string{}, protos...) // not nil: given
		return nil
	}
}

// WithBatch sends the requests k at a time as JSON-RPC batches (one POST
// or line each) and reports how the server answered them (BatchReport).
// Only protocol 2025-03-26 has batches: with any other negotiated version
// the run says so up front (WithNotice) and sends them anyway.
func WithBatch(k int) Option {
	return func(o *options) error {
		if k < 1 || k > 10000 {
			return fmt.Errorf("batch size %d: must be from 1 to 10000", k)
		}
		o.batch = k
		return nil
	}
}

// WithNotice calls f with the things the run has to say before its
// report, such as a batch size the negotiated version does not allow.
func WithNotice(f func(string)) Option {
	return func(o *options) error {
		if f == nil {
			return errors.New("notice function is nil")
		}
		o.notice = f
		return nil
	}
}

// WithServerStderr sends the standard error of a stdio server (each
// session's) to w; without it the servers' stderr is discarded. The
// servers write their chunks to w from several goroutines: w must take
// concurrent writes (as *os.File and syncio.Writer do).
func WithServerStderr(w io.Writer) Option {
	return func(o *options) error {
		if w == nil {
			return errors.New("server stderr writer is nil")
		}
		o.stderr = w
		return nil
	}
}

// WithCancel cancels a share ratio (0 < ratio <= 1) of the calls, each one
// after waiting d for its answer from when it was sent (0: right after
// sending it), and reports the cancellations (CancelReport) and the time
// from each to the server going quiet for that request. A cancellation
// never leaves before the call's request has been written on its
// connection; over HTTP, where it goes on another connection, not before
// the call's answer headers came or 20 ms passed since that write
// either, so that it cannot reach the server, or a proxy between, ahead
// of the call.
func WithCancel(d time.Duration, ratio float64) Option {
	return func(o *options) error {
		if d < 0 {
			return fmt.Errorf("cancel delay %v is negative", d)
		}
		if !(ratio > 0 && ratio <= 1) {
			return fmt.Errorf("cancel ratio %v: must be above 0 and at most 1", ratio)
		}
		o.cancelAfter, o.cancelRatio = d, ratio
		return nil
	}
}

// WithHlog writes an HdrHistogram interval log to w: every interval, one
// histogram per series of the values recorded in it, tagged with the series
// name (spaces as '_'). A write error ends up in Report.Warnings.
func WithHlog(w io.Writer, every time.Duration) Option {
	return func(o *options) error {
		if w == nil || every <= 0 {
			return errors.New("interval log needs a writer and a positive interval")
		}
		o.hlog, o.hlogEvery = w, every
		return nil
	}
}

// WithSetupCalls makes every session send calls, in order, once after its
// handshake (a scenario's setup steps). Their latencies go to series named
// "setup " + the call's series; they are not counted as requests.
func WithSetupCalls(calls []Call) Option {
	return func(o *options) error {
		o.setup = append([]Call(nil), calls...)
		return nil
	}
}

// WithLive calls f every interval with the live figures of the run, from
// one goroutine, until the run ends.
func WithLive(interval time.Duration, f func(Live)) Option {
	return func(o *options) error {
		if interval <= 0 || f == nil {
			return errors.New("live progress needs a positive interval and a function")
		}
		o.tick, o.onTick = interval, f
		return nil
	}
}

func newOptions(opts []Option) (*options, error) {
	o, err := parseOptions(opts)
	if err != nil {
		return nil, err
	}
	if o.duration == 0 && o.requests == 0 {
		return nil, errors.New("loadgen: give a duration or a number of requests")
	}
	return o, nil
}

// parseOptions applies opts to the defaults and checks they go together;
// a run without a duration or a request bound is for RunTape only.
func parseOptions(opts []Option) (*options, error) {
	o := &options{sessions: 1, inflight: 1, timeout: DefaultTimeout, version: DefaultProtocolVersion, maxInflight: DefaultMaxInFlight,
		onExit: OnExitStop, interval: DefaultInterval}
	for _, opt := range opts {
		if opt == nil {
			return nil, errors.New("loadgen: nil option")
		}
		if err := opt(o); err != nil {
			return nil, fmt.Errorf("loadgen: %w", err)
		}
	}
	if err := o.applyStages(); err != nil {
		return nil, fmt.Errorf("loadgen: %w", err)
	}
	if n := o.sessions * o.inflight; n > MaxSessions {
		return nil, fmt.Errorf("loadgen: %d sessions with %d in flight each: at most %d requests in flight", o.sessions, o.inflight, MaxSessions)
	}
	if o.results != nil && o.batch > 1 {
		return nil, errors.New("loadgen: results lines are not written for batches")
	}
	if o.batch > 1 && o.cancelRatio > 0 {
		return nil, errors.New("loadgen: batches and cancellation cannot be combined")
	}
	if o.rate > 0 && (o.inflight != 1 || o.think != 0) {
		return nil, errors.New("loadgen: in flight per session and think time belong to the closed model, not to a rate")
	}
	return o, nil
}

// model names the run's model: "open" with a rate, else "closed".
func (o *options) model() string {
	if o.rate > 0 {
		return "open"
	}
	return "closed"
}

// transportOptions returns the options of one connection.
func (o *options) transportOptions(t Target) []transport.Option {
	var out []transport.Option
	if o.grace > 0 {
		out = append(out, transport.WithGrace(o.grace))
	}
	if o.stopNow != nil {
		out = append(out, transport.WithStopNow(o.stopNow))
	}
	if len(t.Command) > 0 && o.stderr != nil {
		out = append(out, transport.WithStderr(o.stderr))
	}
	if transport.IsWebSocketURL(t.URL) {
		return o.wsTransportOptions(out)
	}
	if t.URL != "" || t.SSE != "" {
		out = append(out, transport.WithHTTPClient(o.client))
		if len(o.header) > 0 {
			out = append(out, transport.WithHeader(o.header))
		}
	}
	if t.URL != "" {
		out = append(out, transport.WithProtocolVersion(o.version))
		if o.getStream {
			out = append(out, transport.WithGetStream())
		}
		if o.streamPath != "" {
			out = append(out, transport.WithStreamPath(o.streamPath))
		}
	}
	return out
}
