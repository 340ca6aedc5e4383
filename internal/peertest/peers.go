package peertest

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// installTimeout bounds one install (npm ci or go build) made for a test.
const installTimeout = 10 * time.Minute

// Installs made for tests happen at most once per test binary (and, through
// the cache, once per machine). These memos hold results, not
// configuration: the Installer is always the default one, configured by
// the environment and the working directory.
var (
	npmOnce = sync.OnceValues(func() (*NPMPeers, error) {
		return installDefault(func(ctx context.Context, in *Installer) (*NPMPeers, error) { return in.NPM(ctx) })
	})
	goOnce = sync.OnceValues(func() (*GoPeers, error) {
		return installDefault(func(ctx context.Context, in *Installer) (*GoPeers, error) { return in.Go(ctx) })
	})
)

func installDefault[T any](install func(context.Context, *Installer) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
	defer cancel()
	in, err := NewInstaller()
	if err != nil {
		var zero T
		return zero, err
	}
	return install(ctx, in)
}

// NPM returns the npm peers, installing them first if needed (once per
// machine; about 15 s). It fails the test if they cannot be installed.
func NPM(t testing.TB) *NPMPeers {
	t.Helper()
	p, err := npmOnce()
	if err != nil {
		t.Fatalf("%v", err)
	}
	return p
}

// Go returns the Go peers, building them first if needed (once per
// machine; about 20 s). It fails the test if they cannot be built.
func Go(t testing.TB) *GoPeers {
	t.Helper()
	p, err := goOnce()
	if err != nil {
		t.Fatalf("%v", err)
	}
	return p
}

// Node returns the absolute path of node, failing the test with an install
// hint if it is missing or too old.
func Node(t testing.TB) string {
	t.Helper()
	return NPM(t).Node
}

// ServerEverything returns the argv prefix that runs
// @modelcontextprotocol/server-everything: append "stdio",
// "streamableHttp" (PORT=n in env, endpoint /mcp) or "sse" (PORT=n,
// endpoint /sse). The slice is the caller's to append to.
func ServerEverything(t testing.TB) []string {
	t.Helper()
	return slices.Clone(NPM(t).ServerEverything)
}

// InspectorCLI returns the argv prefix that runs the MCP Inspector in CLI
// mode (`mcp-inspector --cli`): append the target (a server command, or a
// URL with --transport http|sse) and --method and its options. Run it
// through InspectorCommand unless you control the working directory: the
// Inspector fails when the working directory's parent holds a package.json.
func InspectorCLI(t testing.TB) []string {
	t.Helper()
	return slices.Clone(NPM(t).InspectorCLI)
}

// GoEverythingServer returns the path of the go-sdk conformance
// everything-server: no flags for stdio, -http ADDR for Streamable HTTP
// (-stateless=false for sessions; the default is 2026-07-28 stateless).
func GoEverythingServer(t testing.TB) string {
	t.Helper()
	return Go(t).EverythingServer
}

// GoEverythingClient returns the path of the go-sdk conformance
// everything-client: MCP_CONFORMANCE_SCENARIO=<scenario> in env, the server
// URL as its only argument. Scenario "initialize" (connect, list tools)
// works against every peer here; "tools_call" wants a tool add_numbers,
// which none of them has (the go-sdk everything-server's tools are named
// test_*).
func GoEverythingClient(t testing.TB) string {
	t.Helper()
	return Go(t).EverythingClient
}

// MCPGoServer returns the path of testdata/gopeers/mcpgoserver, an mcp-go
// server with tools echo and slow: stdio by default, -http ADDR for
// Streamable HTTP at /mcp (-session default|stateful|stateless).
func MCPGoServer(t testing.TB) string {
	t.Helper()
	return Go(t).MCPGoServer
}
