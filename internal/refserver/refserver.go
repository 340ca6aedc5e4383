// Package refserver is mcptape's built-in reference MCP server: a small,
// deterministic server built on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk), used by `mcptape serve`, the demo,
// the tests and the benchmarks as a well-behaved peer whose every answer is
// known in advance.
//
// # Data flow
//
// [New] builds an *mcp.Server holding the tools, one resource and one prompt
// below. The caller connects it to a transport: [ServeStdio] runs one session
// over a reader/writer pair (newline-delimited JSON, as on a child process's
// stdin/stdout), [HTTPHandler] serves Streamable HTTP at [Path] (stateful
// sessions, stateless, SSE or JSON answers) and [ServeHTTP] runs that handler
// on a listener until a context ends. Requests go through the SDK (framing,
// lifecycle, version negotiation, schema validation of the arguments) to the
// handlers in tools.go; their answers flow back the same way.
//
// On stdio one thing is added to the SDK: the client's bytes pass through
// a small pump (stdio.go) that notes the ids of the calls crossing each
// way, so that at stdin EOF the server answers every call it has received
// before it stops. The SDK alone cancels them, and whether a scripted
// client got its answers would depend on timing.
//
// # Tools
//
//   - echo {message}: text EchoPrefix+message, structured {"message": ...}.
//   - add {a, b}: text of the sum (shortest decimal form), structured {"sum": ...}.
//   - sleep {ms, steps?}: sleeps ms milliseconds in steps steps (default 1);
//     when the call carries a progressToken, sends notifications/progress
//     after each step (progress i, total steps, message "step i/N"). Stops at
//     once when the call is cancelled (notifications/cancelled, or the
//     response stream closed on stateless 2026-07-28 HTTP) and returns the
//     context error as a tool error. Answers "slept N ms". At most
//     [MaxSleepMS] and [MaxSleepSteps].
//   - fail {mode}: "tool" answers a tool error result (isError, text
//     "requested failure"); "rpc" answers a JSON-RPC error response with code
//     [CodeRequestedFailure] (-32010, in the implementation-defined range) and
//     message "requested failure".
//   - blob {bytes}: a text content of exactly that many bytes, the alphabet
//     repeated ("abc...zabc..."), up to [MaxBlobBytes]. (The Go SDK client
//     reads stdio lines of at most 16 MiB unless told otherwise.)
//   - ask {kind}: "elicitation" asks the client for a name with
//     elicitation/create and answers the JSON of the action and content it
//     got ({"action":"accept","content":{"name":"Ada"}}); "sampling" asks for
//     a completion with sampling/createMessage and answers the sampled text.
//     A client that did not declare the capability gets a tool error saying
//     so.
//
// Out-of-range numbers and unknown modes or kinds are tool errors naming the
// argument and its range.
//
// The resource [ReadmeURI] (text/plain, [ReadmeText]) and the prompt "greet"
// {name} (one user message, "Please greet NAME warmly.") complete the set.
//
// # Protocol versions
//
// The server speaks every version the SDK v1.8.0 supports:
// 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25 (initialize handshake) and
// 2026-07-28 (server/discover, per-request _meta, multi round-trip
// requests). Over stdio every version works. Over HTTP the SDK serves
// 2026-07-28 only when stateless; a stateful handler answers a 2026-07-28
// request with -32022 and clients fall back to initialize 2025-11-25.
// [WithProtocolVersions] narrows the set, to test how peers cope with an
// older server.
//
// # Why ask uses multi round-trip results
//
// The ask tool answers its first call with an input request (the
// 2026-07-28 multi round-trip form) instead of calling
// ServerSession.Elicit itself. For clients on 2026-07-28 that is the only
// legal way to ask; for older clients the SDK turns it into a real
// elicitation/create or sampling/createMessage request over the session
// and calls the tool again with the answer. One handler thus serves every
// version. A stateless HTTP server cannot send requests to older clients:
// there ask answers the capability tool error, since a per-request session
// knows no client capabilities.
package refserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultName is the serverInfo name the server reports unless
// [WithImplementation] says otherwise.
const DefaultName = "mcptape-refserver"

// RecommendedGCPercent is the GOGC value `mcptape serve` runs with when
// the environment sets none. The server's live heap stays small (tens of
// MiB) while each call allocates, so with Go's default of 100 it spent
// about 30 % of its CPU collecting: 470-600 µs of CPU per echo call over
// Streamable HTTP on one session, against 210-300 µs at 400 (alternating
// runs on the same machine). As the upstream of the benchmarks, which
// share two cores between client, proxy and server, it should cost the
// machine as little as it can.
const RecommendedGCPercent = 400

// DefaultVersion is the serverInfo version the server reports unless
// [WithImplementation] says otherwise; `mcptape serve` passes the tool
// version.
const DefaultVersion = "dev"

// ReadmeURI is the URI of the server's one resource.
const ReadmeURI = "mcptape://readme"

// ReadmeText is the fixed text/plain content of the [ReadmeURI] resource.
const ReadmeText = "mcptape reference server\n" +
	"Tools: echo, add, sleep, fail, blob, ask. Prompt: greet. Resource: " + ReadmeURI + ".\n" +
	"Every answer is deterministic, so recorded sessions can be replayed and compared.\n"

// Instructions is the instructions text the server sends with its
// initialize (or server/discover) result.
const Instructions = "mcptape reference server: deterministic tools for recording, replay and load tests " +
	"(echo, add, sleep with progress, fail, blob, ask)."

// options holds what [Option]s configure.
type options struct {
	name, version string
	echoPrefix    string
	logger        *slog.Logger
	versions      []string
	chat          Chat
	maxConc       int
}

// Option configures [New]. An Option returns an error for a bad value.
type Option func(*options) error

// WithImplementation sets the serverInfo name and version. Both must be
// non-empty.
func WithImplementation(name, version string) Option {
	return func(o *options) error {
		if name == "" || version == "" {
			return fmt.Errorf("server name and version must not be empty (got %q, %q)", name, version)
		}
		o.name, o.version = name, version
		return nil
	}
}

// WithEchoPrefix sets the text the echo tool puts before every message, so
// that a test can change one tool's answers (replay diffs). Any string is
// valid.
func WithEchoPrefix(prefix string) Option {
	return func(o *options) error {
		o.echoPrefix = prefix
		return nil
	}
}

// WithLogger sends the server's logs (the SDK's and its own: every request
// at debug level, a stopped sleep at info level) to l. Without it, logs are
// discarded. l must not be nil.
func WithLogger(l *slog.Logger) Option {
	return func(o *options) error {
		if l == nil {
			return errors.New("logger must not be nil")
		}
		o.logger = l
		return nil
	}
}

// WithProtocolVersions restricts the protocol versions the server accepts
// to versions (each one of mcp.SupportedProtocolVersions()). Without it the
// server accepts them all.
func WithProtocolVersions(versions ...string) Option {
	return func(o *options) error {
		if len(versions) == 0 {
			return errors.New("protocol versions: need at least one")
		}
		supported := ProtocolVersions()
		for _, v := range versions {
			if !slices.Contains(supported, v) {
				return fmt.Errorf("protocol version %q is not supported (supported: %v)", v, supported)
			}
		}
		o.versions = slices.Clone(versions)
		return nil
	}
}

// WithMaxConcurrency lets at most k tool calls run at once, over all the
// sessions the server serves; further calls wait their turn (first come,
// first served as far as the Go scheduler goes), and their wait counts in
// their latency. With the sleep tool at a fixed ms the server's capacity is
// then known: k / (ms/1000) calls per second, a ground truth for capacity
// searches. k must be at least 1; without the option calls are not bounded.
func WithMaxConcurrency(k int) Option {
	return func(o *options) error {
		if k < 1 {
			return fmt.Errorf("max concurrency %d: must be at least 1", k)
		}
		o.maxConc = k
		return nil
	}
}

// limitCalls is the middleware of WithMaxConcurrency: a tools/call waits
// for one of k slots, or for its context to end.
func limitCalls(k int) mcp.Middleware {
	slots := make(chan struct{}, k)
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			select {
			case slots <- struct{}{}:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			defer func() { <-slots }()
			return next(ctx, method, req)
		}
	}
}

// ProtocolVersions returns the protocol versions the server accepts unless
// [WithProtocolVersions] narrows them: every version the SDK supports,
// newest first.
func ProtocolVersions() []string { return mcp.SupportedProtocolVersions() }

// New returns a reference server configured by opts, ready to be served with
// [ServeStdio], [HTTPHandler] or the SDK's own transports. The same server
// may serve many sessions at once.
func New(opts ...Option) (*mcp.Server, error) {
	o := options{name: DefaultName, version: DefaultVersion}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, fmt.Errorf("refserver: %w", err)
		}
	}
	if o.logger == nil {
		o.logger = slog.New(slog.DiscardHandler)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: o.name, Version: o.version}, &mcp.ServerOptions{
		Instructions:              Instructions,
		Logger:                    o.logger,
		SupportedProtocolVersions: o.versions,
	})
	s.AddReceivingMiddleware(logRequests(o.logger))
	if o.maxConc > 0 {
		s.AddReceivingMiddleware(limitCalls(o.maxConc))
	}
	t := &tools{echoPrefix: o.echoPrefix, log: o.logger}
	if err := t.register(s); err != nil {
		return nil, fmt.Errorf("refserver: %w", err)
	}
	if o.chat.enabled() {
		if err := addTool(s, ChatTool, "Answer the query in streamed chunks (content_start, content_delta…, content_end with usage), "+
			"the streaming dialect of the LangGraph MCP server's documentation.", nil, o.chat.plain); err != nil {
			return nil, fmt.Errorf("refserver: %w", err)
		}
	}
	s.AddResource(&mcp.Resource{
		URI:         ReadmeURI,
		Name:        "readme",
		Title:       "About the mcptape reference server",
		Description: "A fixed text describing this server.",
		MIMEType:    "text/plain",
		Size:        int64(len(ReadmeText)),
	}, readReadme)
	s.AddPrompt(&mcp.Prompt{
		Name:        "greet",
		Title:       "Greet someone",
		Description: "A one-message prompt asking the model to greet NAME.",
		Arguments: []*mcp.PromptArgument{
			{Name: "name", Description: "who to greet", Required: true},
		},
	}, greet)
	return s, nil
}

// logRequests logs every request the server handles, at debug level.
func logRequests(l *slog.Logger) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if !l.Enabled(ctx, slog.LevelDebug) {
				return next(ctx, method, req)
			}
			start := time.Now()
			res, err := next(ctx, method, req)
			l.DebugContext(ctx, "request", "method", method, "took", time.Since(start), "err", err)
			return res, err
		}
	}
}

func readReadme(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
		{URI: ReadmeURI, MIMEType: "text/plain", Text: ReadmeText},
	}}, nil
}

func greet(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	name := req.Params.Arguments["name"]
	if name == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: `prompt "greet": argument "name" is required`}
	}
	return &mcp.GetPromptResult{
		Description: "Greet " + name,
		Messages: []*mcp.PromptMessage{
			{Role: "user", Content: &mcp.TextContent{Text: "Please greet " + name + " warmly."}},
		},
	}, nil
}
