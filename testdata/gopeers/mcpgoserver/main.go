// Command mcpgoserver is a small MCP server built on github.com/mark3labs/mcp-go,
// used by mcptape's end-to-end tests as a peer written by someone else.
//
// It serves two tools:
//
//   - echo {message}: answers "Echo: <message>".
//   - slow {ms, steps}: waits ms milliseconds (default 1000) in steps
//     (default 5), sending notifications/progress after each step when the
//     call carries a progressToken, and stops early when the request is
//     cancelled.
//
// Without -http it speaks MCP over stdio. With -http ADDR it serves
// Streamable HTTP at -path (default /mcp) on ADDR, which must be a loopback
// address (port 0 picks a free port). Responses are plain JSON, mcp-go's
// default; -session picks how session ids are handled. Once listening it
// prints "listening on http://ADDR/PATH" on stderr.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "mcpgoserver:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("mcpgoserver", flag.ContinueOnError)
	httpAddr := fs.String("http", "", "serve Streamable HTTP on this loopback `address` (host:port) instead of stdio")
	path := fs.String("path", "/mcp", "HTTP endpoint `path`")
	session := fs.String("session", "default", "session ids: default (mcp-go's: generated, not checked), stateful (unknown ids get 404), stateless (none)")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return nil
	} else if err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	s := newServer()
	if *httpAddr == "" {
		return server.ServeStdio(s)
	}
	opts, err := sessionOptions(*session)
	if err != nil {
		return err
	}
	return serveHTTP(s, *httpAddr, *path, opts)
}

func newServer() *server.MCPServer {
	s := server.NewMCPServer("mcptape-mcpgo-peer", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("echo",
		mcp.WithDescription("Echoes back the input string"),
		mcp.WithString("message", mcp.Required(), mcp.Description("Message to echo")),
	), echo)
	s.AddTool(mcp.NewTool("slow",
		mcp.WithDescription("Waits, sending progress notifications when asked"),
		mcp.WithNumber("ms", mcp.Description("Total time in milliseconds (default 1000)")),
		mcp.WithNumber("steps", mcp.Description("Number of progress steps (default 5)")),
	), slow)
	return s
}

func echo(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	msg, err := req.RequireString("message")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	return mcp.NewToolResultText("Echo: " + msg), nil
}

func slow(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	total := req.GetInt("ms", 1000)
	steps := req.GetInt("steps", 5)
	if total < 0 || steps < 1 {
		return mcp.NewToolResultError("ms must be >= 0 and steps >= 1"), nil
	}
	var token mcp.ProgressToken
	if req.Params.Meta != nil {
		token = req.Params.Meta.ProgressToken
	}
	step := time.Duration(total) * time.Millisecond / time.Duration(steps)
	timer := time.NewTimer(step)
	defer timer.Stop()
	for i := 1; i <= steps; i++ {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("slow: cancelled after %d of %d steps: %w", i-1, steps, ctx.Err())
		case <-timer.C:
		}
		timer.Reset(step)
		if token == nil {
			continue
		}
		err := server.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/progress", map[string]any{
			"progressToken": token,
			"progress":      i,
			"total":         steps,
		})
		if err != nil {
			return nil, fmt.Errorf("slow: progress %d: %w", i, err)
		}
	}
	return mcp.NewToolResultText(fmt.Sprintf("slept %d ms in %d steps", total, steps)), nil
}

func sessionOptions(mode string) ([]server.StreamableHTTPOption, error) {
	switch mode {
	case "default":
		return nil, nil
	case "stateful":
		return []server.StreamableHTTPOption{server.WithStateful(true)}, nil
	case "stateless":
		return []server.StreamableHTTPOption{server.WithStateLess(true)}, nil
	}
	return nil, fmt.Errorf("-session %q: want default, stateful or stateless", mode)
}

func serveHTTP(s *server.MCPServer, addr, path string, opts []server.StreamableHTTPOption) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("-http %q: %w", addr, err)
	}
	if ip, err := netip.ParseAddr(host); host != "localhost" && (err != nil || !ip.IsLoopback()) {
		return fmt.Errorf("-http %q: not a loopback address", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	opts = append([]server.StreamableHTTPOption{server.WithEndpointPath(path)}, opts...)
	mux := http.NewServeMux()
	mux.Handle(path, server.NewStreamableHTTPServer(s, opts...))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdownCtx)
	}()
	fmt.Fprintf(os.Stderr, "listening on http://%s%s\n", ln.Addr(), path)
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
