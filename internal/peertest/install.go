package peertest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// EnvCacheDir names the environment variable that, when set, is the
// directory where peers are installed (default <repo>/.cache/peers).
const EnvCacheDir = "MCPTAPE_PEERS_DIR"

// MinNodeMajor is the oldest Node.js major version the pinned npm peers
// are known to run on.
const MinNodeMajor = 20

// stampFile marks an install directory as complete; it holds the key.
const stampFile = ".mcptape-peers"

// Paths inside the repository that define what gets installed.
const (
	npmSrcDir = "testdata/peers"
	goSrcDir  = "testdata/gopeers"
)

// Files copied from testdata/peers into the npm install directory; their
// content is the npm cache key.
var npmSrcFiles = []string{"package.json", "package-lock.json", "loopback.cjs"}

// Entry points inside an npm install directory.
const (
	everythingEntry = "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
	inspectorEntry  = "node_modules/@modelcontextprotocol/inspector/cli/build/cli.js"
	loopbackPreload = "loopback.cjs"
)

// Go peers: binary name and the package (inside testdata/gopeers) it is built from.
var goBinaries = []struct{ name, pkg string }{
	{"everything-server", "github.com/modelcontextprotocol/go-sdk/conformance/everything-server"},
	{"everything-client", "github.com/modelcontextprotocol/go-sdk/conformance/everything-client"},
	{"mcpgoserver", "./mcpgoserver"},
}

// Option configures an Installer; a bad value is an error from NewInstaller.
type Option func(*options) error

type options struct {
	repo  string
	cache string
	log   io.Writer
}

// WithRepoRoot sets the mcptape repository whose testdata/peers and
// testdata/gopeers are installed (default: found from the working directory).
func WithRepoRoot(dir string) Option {
	return func(o *options) error {
		if dir == "" {
			return errors.New("repo root: empty path")
		}
		o.repo = dir
		return nil
	}
}

// WithCacheDir sets where peers are installed, overriding EnvCacheDir.
func WithCacheDir(dir string) Option {
	return func(o *options) error {
		if dir == "" {
			return errors.New("cache dir: empty path")
		}
		o.cache = dir
		return nil
	}
}

// WithLog sends the output of the install commands (npm ci, go build) to w
// as they run. Without it the output is kept only for error messages.
func WithLog(w io.Writer) Option {
	return func(o *options) error {
		if w == nil {
			return errors.New("log: nil writer")
		}
		o.log = w
		return nil
	}
}

// Installer installs the pinned peers into a cache directory, each kind at
// most once per content of its sources, safe against other processes doing
// the same at the same time.
type Installer struct {
	repo  string
	cache string
	log   io.Writer
}

// NewInstaller returns an Installer configured by opts.
func NewInstaller(opts ...Option) (*Installer, error) {
	o := options{log: io.Discard}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, fmt.Errorf("peertest: %w", err)
		}
	}
	if o.repo == "" {
		root, err := FindRepoRoot(".")
		if err != nil {
			return nil, fmt.Errorf("peertest: %w", err)
		}
		o.repo = root
	}
	if _, err := os.Stat(filepath.Join(o.repo, npmSrcDir, "package-lock.json")); err != nil {
		return nil, fmt.Errorf("peertest: repo root %s: %w", o.repo, err)
	}
	if o.cache == "" {
		o.cache = os.Getenv(EnvCacheDir)
	}
	if o.cache == "" {
		o.cache = filepath.Join(o.repo, ".cache", "peers")
	}
	var err error
	if o.repo, err = filepath.Abs(o.repo); err != nil {
		return nil, fmt.Errorf("peertest: repo root: %w", err)
	}
	if o.cache, err = filepath.Abs(o.cache); err != nil {
		return nil, fmt.Errorf("peertest: cache dir: %w", err)
	}
	return &Installer{repo: o.repo, cache: o.cache, log: o.log}, nil
}

// RepoRoot returns the repository the Installer installs from.
func (in *Installer) RepoRoot() string { return in.repo }

// CacheDir returns the directory the Installer installs into.
func (in *Installer) CacheDir() string { return in.cache }

// NPMPeers are the installed npm peers. Argument vectors are prefixes: the
// caller appends its own arguments.
type NPMPeers struct {
	// Dir holds package.json and node_modules.
	Dir string
	// Node is the absolute path of the node binary.
	Node string
	// NodeVersion is what `node --version` printed, such as "v20.20.2".
	NodeVersion string
	// ServerEverything runs @modelcontextprotocol/server-everything; append
	// "stdio", "streamableHttp" or "sse". A preload makes it listen on
	// 127.0.0.1 only (PORT chooses the port).
	ServerEverything []string
	// InspectorCLI runs the MCP Inspector in CLI mode; append the target
	// (a command or a URL) and --method etc.
	InspectorCLI []string
}

// GoPeers are the built Go peers.
type GoPeers struct {
	// Dir holds the binaries.
	Dir string
	// EverythingServer is the go-sdk conformance server (stdio, or -http ADDR).
	EverythingServer string
	// EverythingClient is the go-sdk conformance client
	// (MCP_CONFORMANCE_SCENARIO=<name> everything-client URL).
	EverythingClient string
	// MCPGoServer is testdata/gopeers/mcpgoserver, built on mcp-go.
	MCPGoServer string
}

// NPM installs the npm peers pinned by testdata/peers/package-lock.json (with
// `npm ci`) unless the cache already holds them, and returns where they are.
func (in *Installer) NPM(ctx context.Context) (*NPMPeers, error) {
	node, version, err := findNode(ctx)
	if err != nil {
		return nil, err
	}
	src := filepath.Join(in.repo, npmSrcDir)
	dir, err := in.npmCI(ctx, "npm", src, npmSrcFiles, []string{everythingEntry, inspectorEntry, loopbackPreload})
	if err != nil {
		return nil, fmt.Errorf("peertest: npm peers: %w", err)
	}
	return &NPMPeers{
		Dir:              dir,
		Node:             node,
		NodeVersion:      version,
		ServerEverything: []string{node, "-r", filepath.Join(dir, loopbackPreload), filepath.Join(dir, everythingEntry)},
		InspectorCLI:     []string{node, filepath.Join(dir, inspectorEntry), "--cli"},
	}, nil
}

// Go builds the Go peers of testdata/gopeers (go-sdk conformance server and
// client, the mcp-go server) unless the cache already holds binaries built
// from the same sources by the same Go release.
func (in *Installer) Go(ctx context.Context) (*GoPeers, error) {
	src := filepath.Join(in.repo, goSrcDir)
	files, err := goSources(src)
	if err != nil {
		return nil, fmt.Errorf("peertest: go peers: %w", err)
	}
	args := []string{"build", "-o", "DIR/"}
	var want []string
	for _, b := range goBinaries {
		args = append(args, b.pkg)
		want = append(want, b.name)
	}
	env := []string{"GOWORK=off", "GOFLAGS=-mod=readonly -buildvcs=false", "CGO_ENABLED=0"}
	key, err := hashFiles(src, files, slices.Concat([]string{runtime.Version(), runtime.GOOS, runtime.GOARCH}, env, args)...)
	if err != nil {
		return nil, fmt.Errorf("peertest: go peers: %w", err)
	}
	dir, err := in.ensure(ctx, recipe{
		name: "go",
		key:  key,
		want: want,
		build: func(ctx context.Context, tmp string) error {
			goBin, err := exec.LookPath("go")
			if err != nil {
				return fmt.Errorf("go not found in PATH: %w", err)
			}
			args := slices.Clone(args)
			args[2] = tmp + string(filepath.Separator)
			return in.run(ctx, src, env, goBin, args...)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("peertest: go peers: %w", err)
	}
	return &GoPeers{
		Dir:              dir,
		EverythingServer: filepath.Join(dir, "everything-server"),
		EverythingClient: filepath.Join(dir, "everything-client"),
		MCPGoServer:      filepath.Join(dir, "mcpgoserver"),
	}, nil
}

// recipe says how to fill one cache directory.
type recipe struct {
	name  string                                      // kind, also the lock and directory prefix
	key   string                                      // hash of everything the result depends on
	want  []string                                    // paths that must exist in a complete install
	build func(ctx context.Context, tmp string) error // fills tmp
}

// ensure returns <cache>/<name>-<key>, building it first if it is not
// complete. Builds happen in a scratch directory renamed into place at the
// end, under a file lock, so that concurrent test binaries wait for one
// another and an interrupted build leaves nothing that looks complete.
func (in *Installer) ensure(ctx context.Context, r recipe) (string, error) {
	dir := filepath.Join(in.cache, r.name+"-"+r.key)
	if complete(dir, r) {
		return dir, nil
	}
	if err := os.MkdirAll(in.cache, 0o755); err != nil {
		return "", fmt.Errorf("cache dir: %w", err)
	}
	lock, err := lockFile(ctx, filepath.Join(in.cache, r.name+".lock"))
	if err != nil {
		return "", err
	}
	defer lock.unlock()
	if complete(dir, r) { // someone else finished while we waited
		return dir, nil
	}
	tmp := dir + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return "", fmt.Errorf("clean %s: %w", tmp, err)
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", fmt.Errorf("scratch dir: %w", err)
	}
	if err := r.build(ctx, tmp); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	for _, w := range r.want {
		if _, err := os.Stat(filepath.Join(tmp, w)); err != nil {
			os.RemoveAll(tmp)
			return "", fmt.Errorf("install did not produce %s: %w", w, err)
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, stampFile), []byte(r.key), 0o644); err != nil {
		return "", fmt.Errorf("stamp: %w", err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", fmt.Errorf("replace %s: %w", dir, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", fmt.Errorf("install into %s: %w", dir, err)
	}
	return dir, nil
}

// complete reports whether dir holds a finished install for r.
func complete(dir string, r recipe) bool {
	stamp, err := os.ReadFile(filepath.Join(dir, stampFile))
	if err != nil || string(stamp) != r.key {
		return false
	}
	for _, w := range r.want {
		if _, err := os.Stat(filepath.Join(dir, w)); err != nil {
			return false
		}
	}
	return true
}

// run runs an install command in dir, copying its output to the log and
// quoting the end of it in the error when it fails.
func (in *Installer) run(ctx context.Context, dir string, env []string, name string, args ...string) error {
	out := newTailBuffer(8 << 10)
	cmd := Command(ctx, append([]string{name}, args...), env)
	cmd.Dir = dir
	cmd.Stdout = io.MultiWriter(out, in.log)
	cmd.Stderr = cmd.Stdout
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s (in %s): %w\n%s", filepath.Base(name), strings.Join(args, " "), dir, err, out.String())
	}
	return nil
}

// findNode locates node and checks its version.
func findNode(ctx context.Context) (path, version string, err error) {
	path, err = exec.LookPath("node")
	if err != nil {
		return "", "", fmt.Errorf("peertest: node not found in PATH: end-to-end tests need Node.js >= %d and npm (apt-get install nodejs npm): %w", MinNodeMajor, err)
	}
	if path, err = filepath.Abs(path); err != nil {
		return "", "", fmt.Errorf("peertest: node: %w", err)
	}
	out, err := Command(ctx, []string{path, "--version"}, nil).Output()
	if err != nil {
		return "", "", fmt.Errorf("peertest: %s --version: %w", path, err)
	}
	version = strings.TrimSpace(string(out))
	major, err := nodeMajor(version)
	if err != nil {
		return "", "", fmt.Errorf("peertest: %s --version: %w", path, err)
	}
	if major < MinNodeMajor {
		return "", "", fmt.Errorf("peertest: %s is Node.js %s, need >= %d", path, version, MinNodeMajor)
	}
	return path, version, nil
}

// nodeMajor parses the major number of a version such as "v20.20.2".
func nodeMajor(version string) (int, error) {
	v, ok := strings.CutPrefix(version, "v")
	if !ok {
		return 0, fmt.Errorf("version %q: no leading v", version)
	}
	major, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(major)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("version %q: bad major number", version)
	}
	return n, nil
}

// goSources lists go.mod, go.sum and every .go file under dir, relative and sorted.
func goSources(dir string) ([]string, error) {
	files := []string{"go.mod", "go.sum"}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && strings.HasSuffix(path, ".go") {
			rel, err := filepath.Rel(dir, path)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list sources: %w", err)
	}
	slices.Sort(files[2:])
	return files, nil
}

// hashFiles returns a short hex SHA-256 over the names and contents of the
// files (relative to dir) and the extra strings.
func hashFiles(dir string, files []string, extra ...string) (string, error) {
	h := sha256.New()
	for _, name := range files {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return "", fmt.Errorf("hash: %w", err)
		}
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(data))
		h.Write(data)
	}
	for _, e := range extra {
		fmt.Fprintf(h, "%s\x00", e)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// copyFile copies a small file.
func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		return fmt.Errorf("copy: %w", err)
	}
	return nil
}

// String describes the npm peers on one line.
func (p *NPMPeers) String() string {
	return fmt.Sprintf("node %s (%s), npm peers in %s", p.NodeVersion, p.Node, p.Dir)
}
