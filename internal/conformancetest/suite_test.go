package conformancetest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
)

// Timeouts. A scenario takes well under a second directly and a whole
// suite a few seconds, so these only ever end a run that hangs. They are
// longer than the suite's own request timeout (60 s), so that a request
// that hangs through the proxy shows as the failed check it causes.
const (
	scenarioTimeout = 90 * time.Second
	suiteTimeout    = 150 * time.Second
	// slowSlack is how much longer than the direct run a run through the
	// proxy may take. A client that gives up waiting (60 s in the suite)
	// can hide a hang in a scenario that fails anyway; this shows it.
	slowSlack  = 30 * time.Second
	proxyStart = 30 * time.Second // until the proxy prints its URL
	proxyStop  = 15 * time.Second // from SIGINT to exit
	outputKeep = 4 << 10          // bytes of a run's output quoted in failures
)

// binDir holds the mcptape binary built for this test binary.
var binDir string

func TestMain(m *testing.M) {
	if os.Getenv(wrapEnv) != "" { // started by `conformance client --command`
		os.Exit(runWrapper())
	}
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var buildOnce = sync.OnceValues(func() (string, error) {
	root, err := peertest.FindRepoRoot(".")
	if err != nil {
		return "", err
	}
	if binDir, err = os.MkdirTemp("", "mcptape-conformance-"); err != nil {
		return "", fmt.Errorf("build mcptape: %w", err)
	}
	bin := filepath.Join(binDir, "mcptape")
	args := []string{"build", "-o", bin}
	if raceEnabled {
		args = append(args, "-race")
	}
	cmd := exec.Command("go", append(args, "./cmd/mcptape")...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return bin, nil
})

// mcptapeBinary returns the mcptape command, built once per test binary
// (with -race when this test runs with it).
func mcptapeBinary(t *testing.T) string {
	t.Helper()
	bin, err := buildOnce()
	if err != nil {
		t.Fatalf("%v", err)
	}
	return bin
}

// check is one check of a scenario's results, as compared: its id, its
// status and its error message with loopback addresses blanked out (the
// proxy's differ from the server's).
type check struct {
	ID      string `json:"id"`
	Status  string `json:"status"`
	Message string `json:"errorMessage"`
}

func (c check) String() string {
	if c.Message == "" {
		return c.ID + " " + c.Status
	}
	return fmt.Sprintf("%s %s %q", c.ID, c.Status, c.Message)
}

// loopbackAddr matches a loopback host:port in an error message.
var loopbackAddr = regexp.MustCompile(`(127\.0\.0\.1|localhost|\[::1\]):\d+`)

// resultDir is the name the suite gives a scenario's results under -o:
// server-<scenario>-<ISO time with dashes>.
var resultDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$`)

// readChecks reads the checks.json of every scenario under dir, each
// sorted. A scenario that did not finish has a directory but no checks.json,
// and no entry in the result.
func readChecks(dir string) (map[string][]check, error) {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("results: %w", err)
	}
	res := map[string][]check{}
	for _, e := range entries {
		m := resultDir.FindStringSubmatch(e.Name())
		if m == nil || !e.IsDir() {
			return nil, fmt.Errorf("results: unexpected %s in %s", e.Name(), dir)
		}
		if _, dup := res[m[1]]; dup {
			return nil, fmt.Errorf("results: scenario %s twice in %s", m[1], dir)
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name(), "checks.json"))
		if errors.Is(err, os.ErrNotExist) {
			continue // the scenario never finished: no result
		}
		if err != nil {
			return nil, fmt.Errorf("results of %s: %w", m[1], err)
		}
		var checks []check
		if err := json.Unmarshal(data, &checks); err != nil {
			return nil, fmt.Errorf("results of %s: %w", m[1], err)
		}
		for i := range checks {
			checks[i].Message = loopbackAddr.ReplaceAllString(checks[i].Message, "HOST:PORT")
		}
		slices.SortFunc(checks, func(a, b check) int { return strings.Compare(a.String(), b.String()) })
		res[m[1]] = checks
	}
	return res, nil
}

// diffChecks describes how got (through the proxy) differs from want
// (direct), or returns "" when they are the same.
func diffChecks(want, got []check) string {
	if slices.Equal(want, got) {
		return ""
	}
	var b strings.Builder
	for _, c := range want {
		if !slices.Contains(got, c) {
			fmt.Fprintf(&b, "\n  direct only: %s", c)
		}
	}
	for _, c := range got {
		if !slices.Contains(want, c) {
			fmt.Fprintf(&b, "\n  proxy only:  %s", c)
		}
	}
	if b.Len() == 0 {
		fmt.Fprintf(&b, "\n  same checks, other counts: direct %v, proxy %v", want, got)
	}
	return b.String()
}

// run is one run of the suite: `conformance server --url URL args...`.
type run struct {
	checks map[string][]check // by scenario
	err    error              // the suite's exit status, or why it could not run
	hung   bool               // ended by the timeout
	took   time.Duration
	output string // the end of its stdout and stderr
}

// runSuite runs the suite against url with args, its results written under
// dir/results. With observe set, observe.cjs logs into dir/observed.jsonl.
func runSuite(ctx context.Context, conf *peertest.ConformancePeers, url, dir string, observe bool, timeout time.Duration, args ...string) *run {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	obs := ""
	if observe {
		obs = filepath.Join(dir, "observed.jsonl")
	}
	results := filepath.Join(dir, "results")
	cmd := conf.Command(ctx, obs, slices.Concat([]string{"server", "--url", url, "-o", results}, args)...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	r := &run{err: cmd.Run(), took: time.Since(start)}
	r.hung = errors.Is(ctx.Err(), context.DeadlineExceeded)
	r.output = tail(out.String())
	var err error
	if r.checks, err = readChecks(results); err != nil && r.err == nil {
		r.err = err
	}
	return r
}

// ansi matches the colour codes of the suite's output.
var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

func tail(s string) string {
	s = ansi.ReplaceAllString(s, "")
	if len(s) > outputKeep {
		s = "..." + s[len(s)-outputKeep:]
	}
	return s
}

// proxy is a running `mcptape record --listen 127.0.0.1:0 --upstream U`.
type proxy struct {
	URL    string // where clients connect
	Tape   string
	cmd    *exec.Cmd
	stderr string // the file its stdout and stderr go to
	done   chan struct{}
	err    error // exit status, once done is closed
}

// proxyLine is how mcptape record tells clients its URL.
var proxyLine = regexp.MustCompile(`mcptape record: proxying (\S+) to `)

// startProxy starts the recording proxy in front of upstream, writing
// tapePath, its output going to tapePath+".stderr". Its process group is
// killed when ctx ends.
func startProxy(ctx context.Context, bin, upstream, tapePath string) (*proxy, error) {
	p := &proxy{Tape: tapePath, stderr: tapePath + ".stderr", done: make(chan struct{})}
	f, err := os.Create(p.stderr)
	if err != nil {
		return nil, fmt.Errorf("start proxy: %w", err)
	}
	defer f.Close() // the child has its own copy
	p.cmd = peertest.Command(ctx, []string{bin, "record", "--listen", "127.0.0.1:0", "--upstream", upstream, "-o", tapePath}, nil)
	p.cmd.Stdout, p.cmd.Stderr = f, f
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start proxy: %w", err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	deadline := time.NewTimer(proxyStart)
	defer deadline.Stop()
	for {
		if m := proxyLine.FindStringSubmatch(p.output()); m != nil {
			p.URL = m[1]
			return p, nil
		}
		select {
		case <-p.done:
			return nil, fmt.Errorf("proxy exited before serving: %v\n%s", p.err, p.output())
		case <-deadline.C:
			p.cmd.Cancel()
			<-p.done
			return nil, fmt.Errorf("proxy printed no URL in %v:\n%s", proxyStart, p.output())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// output returns the end of what the proxy wrote on stdout and stderr.
func (p *proxy) output() string {
	data, err := os.ReadFile(p.stderr)
	if err != nil {
		return err.Error()
	}
	return tail(string(data))
}

// stop ends the proxy as Ctrl-C does and returns an error unless it exits
// with status 0 in time.
func (p *proxy) stop() error {
	p.cmd.Process.Signal(os.Interrupt)
	t := time.NewTimer(proxyStop)
	defer t.Stop()
	select {
	case <-p.done:
	case <-t.C:
		p.cmd.Cancel()
		<-p.done
		return fmt.Errorf("proxy did not exit within %v of SIGINT; stderr:\n%s", proxyStop, p.output())
	}
	if p.err != nil {
		return fmt.Errorf("proxy: %w; stderr:\n%s", p.err, p.output())
	}
	return nil
}

// message is one line of observe.cjs: a request when Method is set, else
// a response.
type message struct {
	Dir    string `json:"dir"`
	Method string `json:"method"`
	ID     string `json:"id"`
}

// requestKey names a request across a tape and an observation.
func requestKey(dir, method, id string) string { return dir + " " + method + " id " + id }

// unansweredObserved reads what observe.cjs logged and returns, counted by
// requestKey, the requests that got no response: a response answers the
// latest open request of the other direction with its id. (Ids repeat from
// one session to the next; the suite runs its sessions one after another,
// so the latest is the one of the session that is running.)
func unansweredObserved(path string) (map[string]int, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]int{}, nil // the run sent nothing through fetch
	}
	if err != nil {
		return nil, fmt.Errorf("observed: %w", err)
	}
	defer f.Close()
	type open struct{ key, dir, id string }
	var pending []open
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			return nil, fmt.Errorf("observed %s: %w", path, err)
		}
		if m.Method != "" {
			pending = append(pending, open{requestKey(m.Dir, m.Method, m.ID), m.Dir, m.ID})
			continue
		}
		for i := len(pending) - 1; i >= 0; i-- {
			if o := pending[i]; o.dir != m.Dir && o.id == m.ID {
				pending = slices.Delete(pending, i, i+1)
				break
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("observed %s: %w", path, err)
	}
	left := map[string]int{}
	for _, o := range pending {
		left[o.key]++
	}
	return left, nil
}
