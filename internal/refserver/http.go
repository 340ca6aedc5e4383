package refserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Path is where [HTTPHandler] serves Streamable HTTP.
const Path = "/mcp"

// MaxFrameBytes bounds one incoming message: a stdio line or an HTTP
// request body (128 MiB, so that an echo of a blob-sized message fits).
// Larger messages end a stdio session and get 413 over HTTP.
const MaxFrameBytes = 128 << 20

// shutdownGrace is how long [ServeHTTP] waits for open exchanges to end
// before closing their connections.
const shutdownGrace = 5 * time.Second

// HTTPConfig chooses how [HTTPHandler] serves Streamable HTTP.
type HTTPConfig struct {
	// Stateless serves every POST with a temporary session and no
	// Mcp-Session-Id (GET and DELETE get 405): the 2026-07-28 style, and
	// the only mode in which the SDK serves 2026-07-28. Older clients still
	// work, but the server cannot send them requests (ask answers a tool
	// error).
	Stateless bool
	// JSONResponse answers each request with one application/json body
	// instead of an SSE stream; notifications sent during a call (progress)
	// are then dropped by the SDK.
	JSONResponse bool
	// SessionTimeout closes stateful sessions idle for this long; zero
	// keeps them until DELETE.
	SessionTimeout time.Duration
	// Logger receives the HTTP handler's logs; nil discards them.
	Logger *slog.Logger
	// Chat streams the chat tool's calls: a POST holding one such call is
	// answered with an SSE stream of its chunks (see [Chat]), whatever
	// JSONResponse says. The zero value leaves them to the SDK.
	Chat Chat
	// LangGraph serves the HTTP dialect of the LangGraph MCP server's
	// documentation instead of Streamable HTTP (see langgraph.go): POST
	// JSON-RPC at [Path] answered with plain JSON and no session (Stateless
	// and JSONResponse are implied, SessionTimeout is unused), the
	// server's messages on an event stream at GET [StreamPath], where the
	// chat tool's chunks go when a stream is open.
	LangGraph bool
}

// HTTPHandler returns a handler serving s over Streamable HTTP at [Path]
// (other paths get 404), or in the LangGraph dialect (cfg.LangGraph). Request bodies are limited to [MaxFrameBytes]. In
// stateless mode a 2026-07-28 call is cancelled when its client closes the
// response stream. The SDK's protections apply: requests arriving on a
// loopback address with a non-loopback Host header get 403 (DNS rebinding).
func HTTPHandler(s *mcp.Server, cfg HTTPConfig) http.Handler {
	return httpHandler(context.Background(), s, cfg)
}

// httpHandler is HTTPHandler; ctx ends the LangGraph dialect's streamed
// answers still going out.
func httpHandler(ctx context.Context, s *mcp.Server, cfg HTTPConfig) http.Handler {
	if cfg.LangGraph {
		cfg.Stateless, cfg.JSONResponse = true, true
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{
		Stateless:                    cfg.Stateless,
		JSONResponse:                 cfg.JSONResponse,
		SessionTimeout:               cfg.SessionTimeout,
		Logger:                       cfg.Logger,
		MaxRequestBodyBytes:          MaxFrameBytes,
		PropagateRequestCancellation: true,
	})
	if cfg.LangGraph {
		return newLangGraphHandler(ctx, h, cfg.Chat)
	}
	mux := http.NewServeMux()
	if cfg.Chat.enabled() {
		mux.Handle(Path, chatHandler{chat: cfg.Chat, next: h, runs: &chatRuns{}})
	} else {
		mux.Handle(Path, h)
	}
	return mux
}

// ServeHTTP serves s on ln with [HTTPHandler] until ctx is done, then shuts
// down: it stops accepting, cancels the open exchanges (their contexts
// derive from ctx), waits up to 5 s for them and closes what is left. It
// returns nil after such a stop and the error otherwise. ln is closed on
// return. The net/http server's own error log goes to cfg.Logger (at error
// level), or nowhere.
func ServeHTTP(ctx context.Context, ln net.Listener, s *mcp.Server, cfg HTTPConfig) error {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	fresh := &freshConns{conns: make(map[net.Conn]struct{})}
	srv := &http.Server{
		Handler:           httpHandler(ctx, s, cfg),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ConnState:         fresh.track,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelError),
	}
	return serveUntil(ctx, srv, ln, "http", fresh.closeAll)
}

// serveUntil serves srv on ln until ctx is done, then calls before (when
// not nil) and shuts srv down, waiting up to shutdownGrace for open
// requests before closing what is left. It returns nil after such a stop
// and the serving error otherwise, prefixed with what.
func serveUntil(ctx context.Context, srv *http.Server, ln net.Listener, what string, before func()) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("refserver: %s: %w", what, err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	if before != nil {
		before()
	}
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("refserver: %s: %w", what, err)
	}
	return nil
}

// freshConns tracks the connections that have not sent a request yet (a
// client's spare keep-alive connection), which http.Server.Shutdown would
// otherwise wait 5 s for (Go issue 22682): closing them loses nothing.
type freshConns struct {
	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	closing bool
}

// track is the server's ConnState hook.
func (f *freshConns) track(c net.Conn, state http.ConnState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case state == http.StateNew && f.closing:
		_ = c.Close()
	case state == http.StateNew:
		f.conns[c] = struct{}{}
	default:
		delete(f.conns, c)
	}
}

// closeAll closes the fresh connections, and from now on every new one.
func (f *freshConns) closeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closing = true
	for c := range f.conns {
		_ = c.Close()
	}
	clear(f.conns)
}
