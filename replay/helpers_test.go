package replay

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/capture"
	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/tape"
	"github.com/mcptape/mcptape/transport"
)

// helperEnv switches TestHelperRefServer into the reference server on
// stdio; helperPrefixEnv sets its echo prefix.
const (
	helperEnv       = "MCPTAPE_REPLAY_HELPER"
	helperPrefixEnv = "MCPTAPE_REPLAY_ECHO_PREFIX"
)

// needShell skips a test whose server is a POSIX shell script when there
// is no sh (Windows).
func needShell(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no POSIX shell (sh) on this system")
	}
}

// TestHelperRefServer is not a test: run with helperEnv set, it is the
// reference MCP server on stdio (the stdio target of the replay tests).
func TestHelperRefServer(t *testing.T) {
	if os.Getenv(helperEnv) == "" {
		t.Skip("helper process for the replay tests")
	}
	srv, err := refserver.New(refserver.WithEchoPrefix(os.Getenv(helperPrefixEnv)))
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(3)
	}
	if err := refserver.ServeStdio(context.Background(), srv, os.Stdin, os.Stdout); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
	os.Exit(0)
}

// refServerArgv is the command line of the helper reference server.
func refServerArgv() []string {
	return []string{os.Args[0], "-test.run=^TestHelperRefServer$"}
}

// stdioDial dials the helper reference server with the given echo prefix.
func stdioDial(prefix string) DialFunc {
	return func(ctx context.Context, _ *Session) (transport.Conn, error) {
		return transport.DialStdio(ctx, refServerArgv(), transport.WithEnv(helperEnv+"=1", helperPrefixEnv+"="+prefix), transport.WithGrace(2*time.Second))
	}
}

// recordStdio records a Go SDK client session asking for protocol version
// ("" for the SDK's default), driven by scenario, with
// the helper reference server behind the stdio capture proxy, and returns
// the tape's path.
func recordStdio(t *testing.T, version string, copts *mcp.ClientOptions, scenario func(ctx context.Context, cs *mcp.ClientSession)) string {
	t.Helper()
	toServer, fromServer, finish := stdioProxy(t, refServerArgv(), helperEnv+"=1")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "replay-test", Version: "1"}, copts)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: fromServer, Writer: toServer, MaxLineLength: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	scenario(ctx, cs)
	cs.Close()
	return finish()
}

// stdioProxy starts the server argv (with env added to the environment)
// behind the stdio capture proxy, recording to a new tape. It returns the
// pipes of the client side, and finish, which closes the client's end,
// waits for the proxy and returns the tape's path.
func stdioProxy(t *testing.T, argv []string, env ...string) (toServer io.WriteCloser, fromServer io.ReadCloser, finish func() string) {
	t.Helper()
	return stdioProxyGrace(t, 0, argv, env...)
}

// stdioProxyGrace is stdioProxy with the recorder's shutdown grace (0:
// its default), for a server that does not exit when its input ends.
func stdioProxyGrace(t *testing.T, grace time.Duration, argv []string, env ...string) (toServer io.WriteCloser, fromServer io.ReadCloser, finish func() string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rec.jsonl.zst")
	w, err := tape.Create(path, tape.Header{Tool: "mcptape", Transport: "stdio", Target: argv[len(argv)-1]})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := capture.RunStdio(ctx, capture.StdioOptions{
			Command: argv, Env: append(os.Environ(), env...), Stdin: c2sR, Stdout: s2cW, Tape: w, CloseStdout: true, Grace: grace,
		})
		done <- err
	}()
	return c2sW, s2cR, func() string {
		t.Helper()
		defer cancel()
		c2sW.Close()
		if err := <-done; err != nil {
			t.Fatalf("RunStdio: %v", err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return path
	}
}

// loadTape loads every session of the tape at path.
func loadTape(t *testing.T, path string) []*Session {
	t.Helper()
	r, err := tape.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sessions, _, err := Load(r)
	if err != nil {
		t.Fatal(err)
	}
	return sessions
}

// call calls a tool and fails the test on error.
func call(t *testing.T, ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res
}
