package conformancetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
)

// mockLine is how mcptape mock tells its URL.
var mockLine = regexp.MustCompile(`listening on (http://\S+/mcp)`)

// startMock starts `mcptape mock TAPE --http 127.0.0.1:0` and returns its
// endpoint and a function that stops it as Ctrl-C does and returns what it
// wrote on stderr (its report).
func startMock(t *testing.T, ctx context.Context, bin, tapePath string) (string, func() string) {
	t.Helper()
	errPath := tapePath + ".mock.stderr"
	f, err := os.Create(errPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// Its own context: t.Context ends before the cleanup, which stops the
	// mock as Ctrl-C does so that it writes its report.
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	cmd := peertest.Command(ctx, []string{bin, "mock", tapePath, "--http", "127.0.0.1:0"}, nil)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stop := func() string {
		defer cancel()
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(proxyStop):
			cmd.Cancel()
			<-done
		}
		out, _ := os.ReadFile(errPath)
		return string(out)
	}
	once := sync.OnceValue(stop)
	t.Cleanup(func() { once() })
	deadline := time.Now().Add(proxyStart)
	for time.Now().Before(deadline) {
		out, _ := os.ReadFile(errPath)
		if m := mockLine.FindStringSubmatch(string(out)); m != nil {
			return m[1], once
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("mcptape mock printed no URL in %v", proxyStart)
	return "", nil
}

// TestConformanceAgainstMock records the whole conformance server suite
// against the go-sdk everything-server (stateful) through mcptape record,
// then runs the suite against mcptape mock of that tape: every check that
// passed against the real server passes against the mock (there is no
// exception to list: mockExceptions is empty), and the mock's report
// shows no unmatched request.
func TestConformanceAgainstMock(t *testing.T) {
	if testing.Short() {
		t.Skip("real peers: not in -short mode")
	}
	conf := peertest.Conformance(t)
	bin := mcptapeBinary(t)
	ctx := t.Context()
	srv := peertest.GoEverythingHTTP(t, ctx, false)
	dir := t.TempDir()
	recDir, mockDir := filepath.Join(dir, "rec"), filepath.Join(dir, "mock")
	for _, d := range []string{recDir, mockDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tapePath := filepath.Join(recDir, "tape.jsonl.zst")
	p, err := startProxy(ctx, bin, srv.URL, tapePath)
	if err != nil {
		t.Fatal(err)
	}
	recorded := runSuite(ctx, conf, p.URL, recDir, false, suiteTimeout, "--suite", "all")
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}
	if recorded.hung {
		t.Fatalf("the suite hung through the recording proxy:\n%s", recorded.output)
	}
	url, stopMock := startMock(t, ctx, bin, tapePath)
	mocked := runSuite(ctx, conf, url, mockDir, false, suiteTimeout, "--suite", "all")
	report := stopMock()
	if !strings.Contains(report, " 0 unmatched;") {
		t.Errorf("the mock met requests it has no answer for:\n%s", tail(report))
	}
	if mocked.hung {
		t.Errorf("the suite hung against the mock:\n%s", mocked.output)
	}
	var scenarios []string
	for sc := range recorded.checks {
		scenarios = append(scenarios, sc)
	}
	sort.Strings(scenarios)
	passed := 0
	for _, sc := range scenarios {
		got := map[string]check{}
		for _, c := range mocked.checks[sc] {
			got[c.ID] = c
		}
		for _, c := range recorded.checks[sc] {
			if c.Status != "SUCCESS" {
				continue
			}
			g, ok := got[c.ID]
			switch {
			case ok && g.Status == "SUCCESS":
				passed++
			case mockExceptions[sc+" "+c.ID] != "":
			default:
				t.Errorf("scenario %s: check %s passed against the server, against the mock: %s", sc, c.ID, describe(g, ok))
			}
		}
	}
	t.Logf("%d checks passed against the server and the mock", passed)

}

func describe(c check, ok bool) string {
	if !ok {
		return "not run"
	}
	return strings.TrimSpace(fmt.Sprintf("%s %s", c.Status, c.Message))
}

// mockExceptions are the checks ("scenario check-id") that pass against
// the real server but cannot against a mock of its recording, with why.
var mockExceptions = map[string]string{}
