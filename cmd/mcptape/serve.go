package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"

	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/spf13/pflag"
)

// serveCmd is `mcptape serve`: the reference MCP server (internal/refserver)
// on stdio, Streamable HTTP or WebSocket.
func serveCmd() *command {
	return &command{
		name:    "serve",
		summary: "Run the reference MCP server (stdio, Streamable HTTP with --http, WebSocket with --ws)",
		usage:   "serve [--http ADDR [--stateless] [--json] [--dialect streamable|langgraph] | --ws ADDR] [--echo-prefix S] [FLAGS]",
		examples: `  mcptape serve                                       # stdio: MCP on stdin/stdout, stops on stdin EOF
  mcptape serve --http 127.0.0.1:8080                 # Streamable HTTP at http://127.0.0.1:8080/mcp
  mcptape serve --http 8080                           # the same: a bare port listens on 127.0.0.1
  mcptape serve --http 127.0.0.1:0                    # any free port; the address is printed on stderr
  mcptape serve --http 127.0.0.1:8080 --stateless     # no sessions: the 2026-07-28 style
  mcptape serve --http 127.0.0.1:8080 --json          # application/json answers instead of SSE
  mcptape serve --ws 127.0.0.1:8081                   # WebSocket at ws://127.0.0.1:8081/mcp and /mcp/ws
  mcptape serve --echo-prefix 'v2: '                  # change echo's answers (replay diff tests)
  mcptape serve --protocol-version 2025-06-18         # accept only this protocol version
  mcptape serve --stream-chunks 5 --chunk-delay 20ms  # a chat tool answering in streamed chunks
  mcptape serve --ws 8081 --stream-chunks 5           # the same over WebSocket: a text frame per chunk
  mcptape serve --http 8000 --dialect langgraph --stream-chunks 5
                    # the LangGraph docs' HTTP: POST /mcp plain JSON, no session; chunks on GET /mcp/stream
  mcptape record -o run.jsonl.zst -- mcptape serve    # record a session with the reference server
`,
		setup: func(fs *pflag.FlagSet) runFunc {
			httpAddr := fs.String("http", "", "serve Streamable HTTP at http://`ADDR`/mcp instead of stdio (HOST:PORT, or a bare PORT on 127.0.0.1; port 0 picks a free one)")
			wsAddr := fs.String("ws", "", "serve MCP over WebSocket at ws://`ADDR`/mcp and ws://ADDR/mcp/ws instead of stdio (HOST:PORT or a bare PORT on 127.0.0.1); "+
				"subprotocol mcp when the client offers it, none otherwise")
			stateless := fs.Bool("stateless", false, "with --http: no sessions, every POST stands alone (needed for protocol 2026-07-28 over HTTP)")
			jsonResp := fs.Bool("json", false, "with --http: answer application/json instead of an SSE stream (progress notifications are dropped)")
			dialect := fs.String("dialect", "streamable", "with --http: `NAME` of the HTTP dialect: streamable (Streamable HTTP) or langgraph "+
				"(the LangGraph MCP server docs' HTTP: POST /mcp answered with plain JSON, no session, batches; server messages, "+
				"and the chat tool's chunks while one is open, on the event stream GET /mcp/stream)")
			sessionTimeout := fs.Duration("session-timeout", 0, "with --http: close sessions idle this long (0: keep until DELETE)")
			echoPrefix := fs.String("echo-prefix", "", "text put before every echo answer")
			versions := fs.StringSlice("protocol-version", nil, "accept only these protocol `VERSIONS` (repeat or comma-separate; default: all of "+
				strings.Join(refserver.ProtocolVersions(), ", ")+")")
			chunks := fs.Int("stream-chunks", 0, "add a chat {query} tool answering in `N` streamed content_delta results between content_start and content_end "+
				"(several results for one id, as in the LangGraph MCP server's docs: a line each on stdio, an SSE stream per call over --http, a text frame each over --ws; notifications/cancelled stops a call's stream, end result included); 0: no chat tool")
			chunkDelay := fs.Duration("chunk-delay", 0, "with --stream-chunks: pause before each delta and the end result")
			maxConc := fs.Int("max-concurrency", 0, "run at most `K` tool calls at once; more wait their turn (0: no bound). With the sleep tool at ms milliseconds, capacity is K/(ms/1000) calls/s")
			logLevel := fs.String("log-level", "error", "server log on stderr: debug, info, warn, error or off")
			return func(ctx context.Context, st *stdio, args []string) error {
				if len(args) > 0 {
					return usageError("serve takes no arguments (got %q)", args[0])
				}
				if *httpAddr != "" && *wsAddr != "" {
					return usageError("--http and --ws exclude each other")
				}
				defer tuneGC(refserver.RecommendedGCPercent)()
				if *httpAddr == "" && (*stateless || *jsonResp || *sessionTimeout != 0) {
					return usageError("--stateless, --json and --session-timeout need --http")
				}
				langGraph := false
				switch *dialect {
				case "streamable":
				case "langgraph":
					langGraph = true
					if *httpAddr == "" {
						return usageError("--dialect langgraph needs --http")
					}
					if *stateless || *jsonResp || *sessionTimeout != 0 {
						return usageError("--dialect langgraph is stateless with JSON answers already: drop --stateless, --json and --session-timeout")
					}
				default:
					return usageError("--dialect: want streamable or langgraph (got %q)", *dialect)
				}
				if *chunks == 0 && *chunkDelay != 0 {
					return usageError("--chunk-delay needs --stream-chunks")
				}
				chat := refserver.Chat{Chunks: *chunks, Delay: *chunkDelay}
				logger, err := serveLogger(st, *logLevel)
				if err != nil {
					return err
				}
				opts := []refserver.Option{
					refserver.WithImplementation(refserver.DefaultName, version),
					refserver.WithEchoPrefix(*echoPrefix),
					refserver.WithLogger(logger),
				}
				if *chunks != 0 {
					opts = append(opts, refserver.WithChat(chat))
				}
				if len(*versions) > 0 {
					opts = append(opts, refserver.WithProtocolVersions(*versions...))
				}
				if *maxConc != 0 {
					opts = append(opts, refserver.WithMaxConcurrency(*maxConc))
				}
				srv, err := refserver.New(opts...)
				if err != nil {
					return usageError("%v", err)
				}
				if *httpAddr == "" && *wsAddr == "" {
					return refserver.ServeStdioChat(ctx, srv, chat, st.in, st.out)
				}
				flag, scheme, raw := "--http", "http", *httpAddr
				if *wsAddr != "" {
					flag, scheme, raw = "--ws", "ws", *wsAddr
				}
				addr, err := listenAddr(raw)
				if err != nil {
					return usageError("%s: %v", flag, err)
				}
				var lc net.ListenConfig
				ln, err := lc.Listen(ctx, listenNetwork(addr), addr)
				if err != nil {
					return err // "listen tcp 127.0.0.1:8080: bind: address already in use"
				}
				warnReachable(commandLogf(st.err, "serve"), "listening", ln.Addr(), "")
				fmt.Fprintf(st.err, "listening on %s://%s%s\n", scheme, ln.Addr(), refserver.Path)
				if langGraph {
					fmt.Fprintf(st.err, "server messages on GET http://%s%s\n", ln.Addr(), refserver.StreamPath)
				}
				if *wsAddr != "" {
					return refserver.ServeWS(ctx, ln, srv, refserver.WSConfig{Logger: logger, Chat: chat})
				}
				return refserver.ServeHTTP(ctx, ln, srv, refserver.HTTPConfig{
					Stateless:      *stateless,
					JSONResponse:   *jsonResp,
					SessionTimeout: *sessionTimeout,
					Logger:         logger,
					Chat:           chat,
					LangGraph:      langGraph,
				})
			}
		},
	}
}

// listenAddr checks the --http value and turns a bare port into a loopback
// address.
func listenAddr(s string) (string, error) {
	if p, err := strconv.ParseUint(s, 10, 16); err == nil {
		return net.JoinHostPort("127.0.0.1", strconv.FormatUint(p, 10)), nil
	}
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", fmt.Errorf("want HOST:PORT or PORT: %w", err)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fmt.Errorf("bad port %q in %q", port, s)
	}
	return s, nil
}

// warnReachable warns, through logf, when addr is one other machines can
// reach (not a loopback address): every listener of mcptape says so the
// same way. what names the listener ("listening", "--metrics listening");
// exposes, when not "", what anyone who connects gets ("uses your
// upstream session and ends up in the tape").
func warnReachable(logf func(format string, a ...any), what string, addr net.Addr, exposes string) {
	if ta, ok := addr.(*net.TCPAddr); !ok || ta.IP.IsLoopback() {
		return
	}
	if exposes != "" {
		exposes = ": anyone who can connect " + exposes
	}
	logf("warning: %s on %s, which other machines can reach%s; use 127.0.0.1:PORT to stay local", what, addr, exposes)
}

// commandLogf returns a logger of one line on w per call, prefixed by
// "mcptape NAME: ".
func commandLogf(w io.Writer, name string) func(format string, a ...any) {
	return func(format string, a ...any) { fmt.Fprintf(w, "mcptape "+name+": "+format+"\n", a...) }
}

// listenNetwork keeps an IP literal to its family ("0.0.0.0:80" does not
// also listen on IPv6, as plain "tcp" would); names use "tcp".
func listenNetwork(addr string) string {
	host, _, _ := net.SplitHostPort(addr)
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		return "tcp"
	case ip.To4() != nil:
		return "tcp4"
	}
	return "tcp6"
}

// serveLogger returns the server's logger: text on stderr at level, or a
// discarding one for "off".
func serveLogger(st *stdio, level string) (*slog.Logger, error) {
	if level == "off" {
		return slog.New(slog.DiscardHandler), nil
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usageError("--log-level: want debug, info, warn, error or off (got %q)", level)
	}
	return slog.New(slog.NewTextHandler(st.err, &slog.HandlerOptions{Level: l})), nil
}
