package peertest

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"testing"
)

// portAttempts is how many fresh ports the Start helpers try when a port
// found free was taken before the server could bind it.
const portAttempts = 3

// startOnFreePort starts the server that argvFor describes for a free port,
// retrying with another port if the server reports the address in use.
func startOnFreePort(t testing.TB, ctx context.Context, argvFor func(port int) (argv, env []string, url string)) *Process {
	t.Helper()
	for attempt := 1; ; attempt++ {
		port, err := freePort()
		if err != nil {
			t.Fatalf("peertest: %v", err)
		}
		argv, env, url := argvFor(port)
		p, err := startHTTP(ctx, argv, env, url)
		if err == nil {
			cleanupProcess(t, p)
			return p
		}
		if !errors.Is(err, errAddrInUse) || attempt == portAttempts {
			t.Fatalf("peertest: %v", err)
		}
	}
}

func loopbackURL(port int, path string) string {
	return "http://127.0.0.1:" + strconv.Itoa(port) + path
}

// EverythingStdio starts server-everything over stdio.
func EverythingStdio(t testing.TB, ctx context.Context) *Process {
	t.Helper()
	return StartStdio(t, ctx, append(ServerEverything(t), "stdio"), nil)
}

// EverythingHTTP starts server-everything's Streamable HTTP transport on a
// free loopback port; p.URL is its endpoint, http://127.0.0.1:PORT/mcp.
func EverythingHTTP(t testing.TB, ctx context.Context) *Process {
	t.Helper()
	return everythingOn(t, ctx, "streamableHttp", "/mcp")
}

// EverythingSSE starts server-everything's legacy HTTP+SSE transport on a
// free loopback port; p.URL is its stream, http://127.0.0.1:PORT/sse.
func EverythingSSE(t testing.TB, ctx context.Context) *Process {
	t.Helper()
	return everythingOn(t, ctx, "sse", "/sse")
}

func everythingOn(t testing.TB, ctx context.Context, transport, path string) *Process {
	t.Helper()
	prefix := ServerEverything(t)
	return startOnFreePort(t, ctx, func(port int) ([]string, []string, string) {
		return slices.Concat(prefix, []string{transport}), []string{"PORT=" + strconv.Itoa(port)}, loopbackURL(port, path)
	})
}

// GoEverythingStdio starts the go-sdk conformance everything-server over stdio.
func GoEverythingStdio(t testing.TB, ctx context.Context) *Process {
	t.Helper()
	return StartStdio(t, ctx, []string{GoEverythingServer(t)}, nil)
}

// GoEverythingHTTP starts the go-sdk conformance everything-server over
// Streamable HTTP on a free loopback port; p.URL is
// http://127.0.0.1:PORT/mcp (it serves every path). stateless selects the
// 2026-07-28 style; false gives 2025 sessions.
func GoEverythingHTTP(t testing.TB, ctx context.Context, stateless bool) *Process {
	t.Helper()
	bin := GoEverythingServer(t)
	return startOnFreePort(t, ctx, func(port int) ([]string, []string, string) {
		addr := "127.0.0.1:" + strconv.Itoa(port)
		return []string{bin, "-http", addr, "-stateless=" + strconv.FormatBool(stateless)}, nil, loopbackURL(port, "/mcp")
	})
}

// MCPGoStdio starts the mcp-go server over stdio.
func MCPGoStdio(t testing.TB, ctx context.Context) *Process {
	t.Helper()
	return StartStdio(t, ctx, []string{MCPGoServer(t)}, nil)
}

// MCPGoHTTP starts the mcp-go server over Streamable HTTP on a free loopback
// port with extra flags (such as "-session", "stateful"); p.URL is
// http://127.0.0.1:PORT/mcp. To serve another -path use StartHTTP.
func MCPGoHTTP(t testing.TB, ctx context.Context, flags ...string) *Process {
	t.Helper()
	bin := MCPGoServer(t)
	return startOnFreePort(t, ctx, func(port int) ([]string, []string, string) {
		argv := slices.Concat([]string{bin, "-http", "127.0.0.1:" + strconv.Itoa(port)}, flags)
		return argv, nil, loopbackURL(port, "/mcp")
	})
}

// InspectorCommand returns a command running the Inspector CLI with args
// (target, then options such as --method tools/list). It runs in the npm
// install directory, where the Inspector finds its own package.json, so
// give absolute paths in args. Its process group is killed when ctx ends.
func InspectorCommand(t testing.TB, ctx context.Context, args ...string) *exec.Cmd {
	t.Helper()
	peers := NPM(t)
	cmd := Command(ctx, slices.Concat(peers.InspectorCLI, args), nil)
	cmd.Dir = peers.Dir
	return cmd
}

// Inspector runs the Inspector CLI with args and returns its standard
// output (JSON), failing the test with its stderr if it fails.
func Inspector(t testing.TB, ctx context.Context, args ...string) string {
	t.Helper()
	cmd := InspectorCommand(t, ctx, args...)
	stderr := newTailBuffer(outputKeep)
	cmd.Stderr = stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("peertest: inspector %v: %v\n%s", args, err, stderr)
	}
	return string(out)
}

// GoClientCommand returns a command running the go-sdk conformance
// everything-client scenario against the server at url. Its process group
// is killed when ctx ends.
func GoClientCommand(t testing.TB, ctx context.Context, scenario, url string) *exec.Cmd {
	t.Helper()
	return Command(ctx, []string{GoEverythingClient(t), url}, []string{"MCP_CONFORMANCE_SCENARIO=" + scenario})
}

// String describes the process for messages.
func (p *Process) String() string {
	return fmt.Sprintf("pid %d %v", p.Pid(), p.Argv)
}
