package peertest

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
)

// DuckDBVersion is the pinned version of @duckdb/node-api, set in
// testdata/duckdb/package.json.
const DuckDBVersion = "1.5.6-r.1"

// duckdbSrcDir holds package.json and package-lock.json pinning DuckDB,
// plus query.cjs.
const duckdbSrcDir = "testdata/duckdb"

// duckdbSrcFiles are copied into the install directory; their content is
// the cache key.
var duckdbSrcFiles = []string{"package.json", "package-lock.json", "query.cjs"}

// Entry points inside the DuckDB install directory.
const (
	duckdbEntry = "node_modules/@duckdb/node-api/lib/index.js"
	queryScript = "query.cjs"
)

// ErrDuckDBUnsupported is wrapped by Installer.DuckDB on a platform for
// which DuckDB publishes no prebuilt binding.
var ErrDuckDBUnsupported = errors.New("DuckDB not available here")

// DuckDBPlatform reports whether the pinned DuckDB can run on this OS and
// architecture, and if not, why: its engine comes as a native binding
// (@duckdb/node-bindings-<os>-<arch>, an optional dependency npm picks by
// platform), published for linux, darwin and windows on x64 and arm64.
func DuckDBPlatform() (ok bool, why string) {
	if slices.Contains([]string{"linux", "darwin", "windows"}, runtime.GOOS) && slices.Contains([]string{"amd64", "arm64"}, runtime.GOARCH) {
		return true, ""
	}
	return false, fmt.Sprintf("DuckDB's npm package has native bindings for linux, darwin and windows on amd64 and arm64 only (this is %s/%s)", runtime.GOOS, runtime.GOARCH)
}

// DuckDBPeers is the installed DuckDB.
type DuckDBPeers struct {
	// Dir holds package.json, node_modules and query.cjs.
	Dir string
	// Query runs testdata/duckdb/query.cjs: append a JSON file of
	// [{"name", "sql"}]; it prints {"name": [rows]}.
	Query []string
}

// DuckDB installs the DuckDB pinned by testdata/duckdb/package-lock.json
// (npm ci, with the node and npm found in PATH) unless the cache already
// holds it. On a platform without a DuckDB binding it installs nothing
// and returns an error wrapping ErrDuckDBUnsupported.
func (in *Installer) DuckDB(ctx context.Context) (*DuckDBPeers, error) {
	if ok, why := DuckDBPlatform(); !ok {
		return nil, fmt.Errorf("peertest: %w: %s", ErrDuckDBUnsupported, why)
	}
	node, _, err := findNode(ctx)
	if err != nil {
		return nil, err
	}
	src := filepath.Join(in.repo, duckdbSrcDir)
	dir, err := in.npmCI(ctx, "duckdb", src, duckdbSrcFiles, []string{duckdbEntry, queryScript})
	if err != nil {
		return nil, fmt.Errorf("peertest: duckdb: %w", err)
	}
	return &DuckDBPeers{Dir: dir, Query: []string{node, filepath.Join(dir, queryScript)}}, nil
}

var duckdbOnce = sync.OnceValues(func() (*DuckDBPeers, error) {
	return installDefault(func(ctx context.Context, in *Installer) (*DuckDBPeers, error) { return in.DuckDB(ctx) })
})

// DuckDB returns the pinned DuckDB, installing it first if needed (once
// per machine; a few seconds). On a platform without a DuckDB binding it
// skips the test, saying why; any other install error fails the test.
func DuckDB(t testing.TB) *DuckDBPeers {
	t.Helper()
	return platformPeer(t, DuckDBPlatform, duckdbOnce)
}

// platformPeer returns what install gives, skipping the test, saying why,
// when platform says the peer does not run here, and failing it when the
// install fails.
func platformPeer[T any](t testing.TB, platform func() (bool, string), install func() (T, error)) T {
	t.Helper()
	if ok, why := platform(); !ok {
		t.Skip(why)
	}
	p, err := install()
	if err != nil {
		t.Fatalf("%v", err)
	}
	return p
}
