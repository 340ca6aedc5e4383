package conformancetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/analysis"
	"github.com/mcptape/mcptape/internal/peertest"
)

// server is a real MCP server the suite runs against.
type server struct {
	name  string
	start func(t *testing.T, ctx context.Context) *peertest.Process
}

var servers = []server{
	{"go-sdk-stateful", func(t *testing.T, ctx context.Context) *peertest.Process {
		return peertest.GoEverythingHTTP(t, ctx, false)
	}},
	{"go-sdk-stateless", func(t *testing.T, ctx context.Context) *peertest.Process {
		return peertest.GoEverythingHTTP(t, ctx, true)
	}},
	{"server-everything", func(t *testing.T, ctx context.Context) *peertest.Process {
		return peertest.EverythingHTTP(t, ctx)
	}},
}

// TestConformanceThroughProxy runs the official conformance server suite
// against each server directly and through mcptape record, scenario by
// scenario and as --suite all, and requires the same checks both ways, no
// hang, and no tape with a request left unanswered that the direct run
// saw answered. See the package doc.
func TestConformanceThroughProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("real peers: not in -short mode")
	}
	conf := peertest.Conformance(t)
	bin := mcptapeBinary(t)
	scenarios := listScenarios(t, conf)
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			t.Parallel()
			t.Run("scenarios", func(t *testing.T) {
				t.Parallel()
				for g, group := range groups(scenarios, scenarioGroups) {
					t.Run(fmt.Sprint(g+1), func(t *testing.T) {
						t.Parallel()
						direct, proxied := srv.start(t, t.Context()), srv.start(t, t.Context())
						for _, sc := range group {
							t.Run(sc, func(t *testing.T) {
								compare(t, conf, bin, direct.URL, proxied.URL, scenarioTimeout, []string{sc}, "--scenario", sc)
							})
						}
					})
				}
			})
			t.Run("suite-all", func(t *testing.T) {
				t.Parallel()
				direct, proxied := srv.start(t, t.Context()), srv.start(t, t.Context())
				compare(t, conf, bin, direct.URL, proxied.URL, suiteTimeout, scenarios, "--suite", "all")
			})
		})
	}
}

// scenarioGroups is how many groups the scenarios of a server are run
// in, each group against a pair of servers of its own, one scenario after
// another; the groups run in parallel with the other tests. As one
// sequence, a server's scenarios were the package's longest test: the
// last one ran alone, with a core idle, for a third of the package's time.
const scenarioGroups = 3

// groups splits names, in order, into n groups of nearly equal size.
func groups(names []string, n int) [][]string {
	var out [][]string
	for i := range n {
		if g := names[i*len(names)/n : (i+1)*len(names)/n]; len(g) > 0 {
			out = append(out, g)
		}
	}
	return out
}

// scenarioLine is a scenario of `conformance list --server`: "  - NAME [versions]".
var scenarioLine = regexp.MustCompile(`(?m)^\s*- (\S+)`)

// listScenarios returns the server scenarios the suite knows.
func listScenarios(t *testing.T, conf *peertest.ConformancePeers) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), scenarioTimeout)
	defer cancel()
	out, err := conf.Command(ctx, "", "list", "--server").CombinedOutput()
	if err != nil {
		t.Fatalf("conformance list --server: %v\n%s", err, out)
	}
	var names []string
	for _, m := range scenarioLine.FindAllStringSubmatch(string(out), -1) {
		names = append(names, m[1])
	}
	if len(names) < 10 || !slices.Contains(names, "server-initialize") {
		t.Fatalf("conformance list --server: cannot read the scenarios from:\n%s", out)
	}
	return names
}

// compare runs the suite with args against directURL (observed) and,
// at the same time, through a new `mcptape record` in front of
// proxiedURL, then checks the results of the scenarios want and the tape.
//
// There is no second try: every server request of the suite's server
// scenarios (elicitation/create, sampling/createMessage) is answered by
// the suite's client handlers before the tool call it belongs to can
// return, so a tape that leaves one unanswered when the direct run
// answered it is a recording fault. (Such a flake, s2c elicitation/create
// id 1 unanswered once in a dozen --suite all runs, was the proxy timing
// a server message after writing it to the client: on a loaded machine
// the client's answer, timed on arrival, could get the earlier time; see
// capture's TestHTTPMessagesTimedBeforeTheClientsNext.)
func compare(t *testing.T, conf *peertest.ConformancePeers, bin, directURL, proxiedURL string, timeout time.Duration, want []string, args ...string) {
	t.Helper()
	ctx := t.Context()
	dir := t.TempDir()
	defer keepFailed(t, dir)
	directDir, proxyDir := filepath.Join(dir, "direct"), filepath.Join(dir, "proxy")
	for _, d := range []string{directDir, proxyDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tapePath := filepath.Join(proxyDir, "tape.jsonl.zst")
	var (
		direct, proxied *run
		proxyErr        error
		wg              sync.WaitGroup
	)
	wg.Go(func() { direct = runSuite(ctx, conf, directURL, directDir, true, timeout, args...) })
	wg.Go(func() {
		p, err := startProxy(ctx, bin, proxiedURL, tapePath)
		if err != nil {
			proxyErr = err
			return
		}
		proxied = runSuite(ctx, conf, p.URL, proxyDir, false, timeout, args...)
		proxyErr = p.stop()
	})
	wg.Wait()
	suite := strings.Join(args, " ")
	if direct.hung {
		t.Fatalf("%s hung directly against %s (no result after %v): the test cannot judge the proxy\n%s", suite, directURL, timeout, direct.output)
	}
	for _, sc := range want {
		if _, ok := direct.checks[sc]; !ok {
			t.Fatalf("%s: no result for scenario %s directly (%v)\n%s", suite, sc, direct.err, direct.output)
		}
	}
	if proxied == nil {
		t.Fatalf("%s: %v", suite, proxyErr)
	}
	if proxyErr != nil {
		t.Errorf("%s: %v", suite, proxyErr)
	}
	t.Logf("%s: %v directly, %v through the proxy", suite, direct.took.Round(time.Millisecond), proxied.took.Round(time.Millisecond))
	checkResults(t, suite, timeout, want, direct, proxied)
	checkTape(t, suite, tapePath, filepath.Join(directDir, "observed.jsonl"))
}

// checkResults requires the proxied run to give every scenario's checks as
// the direct run did, and to finish.
func checkResults(t *testing.T, suite string, timeout time.Duration, want []string, direct, proxied *run) {
	t.Helper()
	failed := false
	for _, sc := range want {
		got, ok := proxied.checks[sc]
		switch {
		case !ok && proxied.hung:
			t.Errorf("scenario %s hung through the proxy (%s: no result after %v)", sc, suite, timeout)
			failed = true
		case !ok:
			t.Errorf("scenario %s: no result through the proxy (%s: %v)", sc, suite, proxied.err)
			failed = true
		default:
			if d := diffChecks(direct.checks[sc], got); d != "" {
				t.Errorf("scenario %s: checks differ through the proxy (%s):%s", sc, suite, d)
				failed = true
			}
		}
		if proxied.hung && !ok {
			break // the scenarios after the hung one never ran
		}
	}
	if !failed && exitCode(direct.err) != exitCode(proxied.err) {
		t.Errorf("%s: the suite exits %q directly but %q through the proxy", suite, exitCode(direct.err), exitCode(proxied.err))
		failed = true
	}
	if !proxied.hung && proxied.took > direct.took+slowSlack {
		t.Errorf("%s took %v through the proxy but %v directly: something waited for a timeout", suite, proxied.took.Round(time.Millisecond), direct.took.Round(time.Millisecond))
		failed = true
	}
	if failed {
		t.Logf("output of the suite through the proxy:\n%s\noutput of the suite directly:\n%s", proxied.output, direct.output)
	}
}

func exitCode(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// checkTape requires every request the tape left unanswered to have been
// left unanswered in the direct run too.
func checkTape(t *testing.T, suite, tapePath, observed string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	rep, err := analysis.Inspect(ctx, tapePath, analysis.WithMaxListed(100000))
	if err != nil {
		t.Fatalf("%s: inspect the tape: %v", suite, err)
	}
	if n := int64(len(rep.Unanswered.Requests)); rep.Unanswered.Count != n {
		t.Fatalf("%s: the tape has %d unanswered requests but lists %d", suite, rep.Unanswered.Count, n)
	}
	allowed, err := unansweredObserved(observed)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Unanswered.Requests {
		key := requestKey(r.Dir, r.Method, r.ID)
		if allowed[key] > 0 {
			allowed[key]--
			continue
		}
		t.Errorf("%s: the tape leaves %s (%s, record %d, session %s) unanswered, which the direct run answered",
			suite, key, cmpName(r.Name), r.Seq, r.Session)
	}
}

func cmpName(name string) string {
	if name == "" {
		return "no name"
	}
	return fmt.Sprintf("%q", name)
}

// keepEnv names a directory where a failed comparison's files are kept:
// with MCPTAPE_CONFORMANCE_KEEP=DIR, each comparison that fails the test
// is copied to DIR/TEST-TIME/: direct/observed.jsonl and direct/results (what
// the direct run sent and read, and its checks), proxy/tape.jsonl.zst and
// proxy/tape.jsonl.zst.stderr (the tape and the proxy's output) and
// proxy/results. Tapes hold the traffic of the test servers only.
const keepEnv = "MCPTAPE_CONFORMANCE_KEEP"

// keepFailed copies dir under $MCPTAPE_CONFORMANCE_KEEP when the test
// failed.
func keepFailed(t *testing.T, dir string) {
	t.Helper()
	keep := os.Getenv(keepEnv)
	if keep == "" || !t.Failed() {
		return
	}
	name := strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()) + "-" + time.Now().UTC().Format("20060102T150405.000000000")
	dst := filepath.Join(keep, name)
	if err := os.MkdirAll(keep, 0o700); err != nil {
		t.Logf("%s: %v", keepEnv, err)
		return
	}
	if err := os.CopyFS(dst, os.DirFS(dir)); err != nil {
		t.Logf("%s: %v", keepEnv, err)
		return
	}
	t.Logf("kept the tape, the proxy's output and both runs' results in %s", dst)
}
