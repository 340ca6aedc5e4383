package capture

// Floors for the benchmarks of "mcptape record": the least any forwarding
// process can cost on this machine. Each runs as a process of its own and
// only moves bytes: no framing, no parsing, no recording. The Go floors
// are this test binary started in a peer mode (see runPeer); the C floors
// (testdata/floor), built with the system's C compiler where there is one,
// show what a hop costs without Go's runtime. A benchmark measures them
// next to the recording proxy and the direct path in the same run, so
// that a target out of reach of any process in the middle shows as such.

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/rawio"
)

// Peer modes of the floors (see runPeer).
const (
	floorForward = "floor-forward" // stdio: the child its arguments name, copied both ways
	floorRelay   = "floor-relay"   // TCP: FLOOR_LISTEN relayed to FLOOR_UPSTREAM
)

// runRelayFloor accepts connections on listen and relays each, byte for
// byte, to a connection of its own to upstream, reading and writing with
// raw system calls as the recording proxy does (package rawio): an HTTP
// proxy that never looks at the traffic. It runs until killed.
func runRelayFloor(listen, upstream string) int {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return 3
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			return 4
		}
		go relay(rawio.Wrap(c), upstream)
	}
}

func relay(c net.Conn, upstream string) {
	defer c.Close()
	u, err := net.Dial("tcp", upstream)
	if err != nil {
		return
	}
	u = rawio.Wrap(u)
	defer u.Close()
	done := make(chan struct{})
	go func() {
		copyConn(u, c)
		u.(interface{ CloseWrite() error }).CloseWrite()
		close(done)
	}()
	copyConn(c, u)
	c.(interface{ CloseWrite() error }).CloseWrite()
	<-done
}

// copyConn copies src to dst through their Read and Write (not the
// splicing io.Copy would choose).
func copyConn(dst io.Writer, src io.Reader) {
	buf := make([]byte, 32<<10)
	io.CopyBuffer(struct{ io.Writer }{dst}, struct{ io.Reader }{src}, buf)
}

// forwardFloor starts the stdio floor in front of argv.
func forwardFloor(tb testing.TB, argv ...string) *rawClient {
	tb.Helper()
	self, env := peerCmd(tb, floorForward)
	return startRawEnv(tb, env, append(self, argv...)...)
}

// relayFloor starts the TCP floor in front of the HTTP server at url and
// returns the URL to use instead, and the relay's process id.
func relayFloor(tb testing.TB, url string) (string, int) {
	tb.Helper()
	self, _ := peerCmd(tb, floorRelay)
	return proxyProcess(tb, url, func(addr, upstreamHost string) ([]string, []string) {
		return self, []string{peerEnv + "=" + floorRelay, "FLOOR_LISTEN=" + addr, "FLOOR_UPSTREAM=" + upstreamHost}
	})
}

// buildCFloor builds the C floor testdata/floor/name.c with the system's
// C compiler and returns the program's path, or "" when there is no C
// compiler.
func buildCFloor(tb testing.TB, name string) string {
	tb.Helper()
	cc, err := exec.LookPath("cc")
	if err != nil {
		return ""
	}
	bin := filepath.Join(tb.TempDir(), name)
	if out, err := exec.Command(cc, "-O2", "-pthread", "-o", bin, filepath.Join("testdata", "floor", name+".c")).CombinedOutput(); err != nil {
		tb.Fatalf("building the C floor %s: %v\n%s", name, err, out)
	}
	return bin
}

// cRelayFloor starts the C relay (testdata/floor/relay.c) in front of the
// HTTP server at url, which must be on 127.0.0.1. It returns the URL to
// use instead and the relay's process id, or "" when there is no C
// compiler.
func cRelayFloor(tb testing.TB, url string) (string, int) {
	tb.Helper()
	bin := buildCFloor(tb, "relay")
	if bin == "" {
		return "", 0
	}
	return proxyProcess(tb, url, func(addr, upstreamHost string) ([]string, []string) {
		_, port, _ := net.SplitHostPort(addr)
		host, upPort, _ := net.SplitHostPort(upstreamHost)
		if host != "127.0.0.1" {
			tb.Fatalf("the C relay relays to 127.0.0.1, not %s", host)
		}
		return []string{bin, port, upPort}, nil
	})
}

// cForwardFloor starts the C forwarder (testdata/floor/forward.c) in front
// of argv, or returns nil when there is no C compiler.
func cForwardFloor(tb testing.TB, argv ...string) *rawClient {
	tb.Helper()
	bin := buildCFloor(tb, "forward")
	if bin == "" {
		return nil
	}
	return startRaw(tb, append([]string{bin}, argv...)...)
}

// TestForwardFloor checks that the stdio floors carry a session both ways
// (the benchmark would otherwise measure a broken path).
func TestForwardFloor(t *testing.T) {
	if testing.Short() {
		t.Skip("builds mcptape")
	}
	floors := map[string]func(testing.TB, ...string) *rawClient{"go": forwardFloor, "c": cForwardFloor}
	for name, start := range floors {
		t.Run(name, func(t *testing.T) {
			c := start(t, mcptapeBin(t), "serve")
			if c == nil {
				t.Skip("no C compiler")
			}
			if d := c.call(t); d <= 0 {
				t.Fatalf("call took %v", d)
			}
		})
	}
}

// TestRelayFloor checks that the TCP floors carry HTTP exchanges, a
// streamed one among them (the benchmark would otherwise measure a broken
// path).
func TestRelayFloor(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.(http.Flusher).Flush()
		fmt.Fprintf(w, "data: %s %s\n\n", r.URL.Path, body)
	}))
	t.Cleanup(up.Close)
	floors := map[string]func(testing.TB, string) (string, int){"go": relayFloor, "c": cRelayFloor}
	for name, start := range floors {
		t.Run(name, func(t *testing.T) {
			url, _ := start(t, up.URL+"/mcp")
			if url == "" {
				t.Skip("no C compiler")
			}
			for i := range 3 { // one connection, kept alive across exchanges
				resp, err := http.Post(url, "application/json", strings.NewReader(strconv.Itoa(i)))
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if want := fmt.Sprintf("data: /mcp %d\n\n", i); err != nil || string(got) != want {
					t.Fatalf("exchange %d: %q, %v; want %q", i, got, err, want)
				}
			}
		})
	}
}
