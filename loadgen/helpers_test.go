package loadgen

import (
	"context"
	"net"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/mcptape/mcptape/internal/refserver"
)

// TestMain lets the test binary act as the reference server over stdio
// when LOADGEN_STDIO_SERVER is set (for the stdio tests).
func TestMain(m *testing.M) {
	if mode := os.Getenv("LOADGEN_FAKE_SERVER"); mode != "" {
		os.Exit(fakeStdioServer(mode, os.Stdin, os.Stdout))
	}
	if os.Getenv("LOADGEN_STDIO_SERVER") == "1" {
		s, err := refserver.New()
		if err != nil {
			os.Exit(3)
		}
		if err := refserver.ServeStdio(context.Background(), s, os.Stdin, os.Stdout); err != nil {
			os.Exit(4)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// stdioTarget starts the test binary as a reference stdio server.
func stdioTarget(t *testing.T) Target {
	t.Helper()
	t.Setenv("LOADGEN_STDIO_SERVER", "1")
	return Target{Command: []string{os.Args[0]}}
}

// refHTTP serves the reference server (configured by opts) over
// Streamable HTTP for one test.
func refHTTP(t *testing.T, cfg refserver.HTTPConfig, opts ...refserver.Option) string {
	t.Helper()
	s, err := refserver.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(refserver.HTTPHandler(s, cfg))
	t.Cleanup(ts.Close)
	return ts.URL + refserver.Path
}

func mustCalls(t *testing.T, specs ...string) []Call {
	t.Helper()
	var out []Call
	for _, s := range specs {
		c, err := ParseCall(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

func errorCount(rep *Report, class string) int64 {
	var n int64
	for _, e := range rep.Errors {
		if e.Class == class {
			n += e.Count
		}
	}
	return n
}

// listen opens a loopback listener for a test server.
func listen(tb testing.TB) (net.Listener, string) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	return ln, "http://" + ln.Addr().String() + refserver.Path
}

func errorDetail(rep *Report, class, detail string) int64 {
	for _, e := range rep.Errors {
		if e.Class == class && e.Detail == detail {
			return e.Count
		}
	}
	return 0
}
