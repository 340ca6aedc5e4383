package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vbauerster/mpb/v8"

	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/loadgen"
)

func refURL(t *testing.T, cfg refserver.HTTPConfig, opts ...refserver.Option) string {
	t.Helper()
	s, err := refserver.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(refserver.HTTPHandler(s, cfg))
	t.Cleanup(ts.Close)
	return ts.URL + refserver.Path
}

func TestLoadUsage(t *testing.T) {
	url := "http://127.0.0.1:1/mcp"
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"load", "--call", "ping", "--requests", "1"}, "exactly one of"},
		{[]string{"load", "--url", url, "--requests", "1"}, "at least one --call"},
		{[]string{"load", "--url", url, "--requests", "1", "--scenario", "/nonexistent.json"}, "--scenario"},
		{[]string{"load", "--url", url, "--requests", "1", "--scenario", "x.json", "--call", "ping"}, "not both"},
		{[]string{"load", "--url", url, "--call", "ping"}, "--duration DUR, --requests N"},
		{[]string{"load", "--url", url, "--call", "tools/call", "--requests", "1"}, "tool name"},
		{[]string{"load", "--url", url, "--call", "ping", "--requests", "1", "--rate", "fast"}, "--rate"},
		{[]string{"load", "--url", url, "--call", "ping", "--requests", "1", "--rate", "10/s", "--inflight", "2"}, "closed model"},
		// --max-inflight drops open-model arrivals: ignored in silence by the closed model before
		{[]string{"load", "--url", url, "--call", "ping", "--requests", "1", "--sessions", "2", "--max-inflight", "5"}, "--max-inflight belongs to the open model"},
		{[]string{"load", "--url", url, "--call", "ping", "--stage", "1s:5", "--max-inflight", "5"}, "--max-inflight belongs to the open model"},
		{[]string{"load", "--url", url, "--call", "ping", "--requests", "1", "--threshold", "p99<1"}, `--threshold "p99<1": want SERIES:STAT`},
		{[]string{"load", "--url", url, "--call", "x {", "--requests", "1"}, `--call "x {": arguments "{" are not valid JSON`},
		{[]string{"load", "--url", url, "--call", "ping", "--stage", "bogus"}, `--stage "bogus": want DUR:TARGET`},
		{[]string{"load", "--url", url, "--call", "ping", "--requests", "1", "--header", "nocolon"}, "--header"},
		{[]string{"load", "--url", url, "--call", "ping", "--requests", "1", "--sessions", "0"}, "sessions"},
		{[]string{"load", "--url", url, "--call", "ping", "--requests", "1", "stray"}, "unexpected argument"},
		{[]string{"load", "--url", url, "--call", "ping", "--stage", "30s"}, "DUR:TARGET"},
		{[]string{"load", "--url", url, "--call", "ping", "--stage", "0s:10/s"}, "positive duration"},
		{[]string{"load", "--url", url, "--call", "ping", "--stage", "1s:ten"}, "neither a number"},
		{[]string{"load", "--url", url, "--call", "ping", "--stage", "1s:10/s", "--stage", "1s:5"}, "all rates"},
		{[]string{"load", "--url", url, "--call", "ping", "--stage", "1s:10/s", "--duration", "1s"}, "no --tape, --duration"},
		{[]string{"load", "--url", url, "--call", "ping", "--stage", "1s:10", "--sessions", "3"}, "no --sessions"},
		{[]string{"load", "--url", url, "--call", "ping", "--stage", "1s:0/s"}, "every target is 0"},
		{[]string{"load", "--url", url, "--call", "ping", "--requests", "1", "--grace", "0s"}, "--grace 0s: must be positive"},
		{[]string{"load", "--call", "ping", "--requests", "1", "--stream-path", "/mcp/stream", "--", "srv"}, "--stream-path needs an http"},
		{[]string{"load", "--url", url, "--call", "ping", "--requests", "1", "--stream-path", "mcp/stream"}, "want a path"},
		{[]string{"load", "--url", url, "--call", "ping", "--requests", "1", "--stream-path", "/s", "--get-stream"}, "exclude each other"},
		// Outputs written once the run is over are checked before it.
		{[]string{"load", "--url", url, "--call", "ping", "--requests", "1", "--json", dir}, "--json " + dir + ": is a directory"},
		{[]string{"load", "--url", url, "--call", "ping", "--requests", "1", "--json", filepath.Join(dir, "no", "r.json")}, "no directory"},
		{[]string{"load", "--url", url, "--call", "ping", "--requests", "1", "--hgrm", file}, "--hgrm " + file + ": not a directory"},
		{[]string{"load", "--url", url, "--call", "ping", "--find-max", "--threshold", "errors<1%", "--json", dir}, "is a directory"},
	}
	for _, c := range cases {
		code, _, stderr := runCLI(t, "", c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%q: code %d stderr %q, want 2 and one line with %q", c.args, code, stderr, c.want)
		}
	}
}

func TestLoadCommand(t *testing.T) {
	url := refURL(t, refserver.HTTPConfig{})
	out := filepath.Join(t.TempDir(), "run.json")
	code, stdout, stderr := runCLI(t, "", "load", "--url", url, "--sessions", "3", "--requests", "60", "--every", "10ms",
		"--call", `tools/call echo {"message":"hi"}`, "--json", out, "--threshold", "tools/call echo:p99<30s", "--threshold", "errors<1%")
	if code != 0 {
		t.Fatalf("code %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "tools/call echo") || !strings.Contains(stdout, "60 sent (") || !strings.Contains(stdout, ": 60 ok (100.00%") || !strings.Contains(stderr, "load: ") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	fi, err := os.Stat(out)
	if err != nil || !privateMode(fi) {
		t.Fatalf("report file: %v %v", fi, err)
	}
	// A scenario file.
	sc := filepath.Join(t.TempDir(), "sc.json")
	if err := os.WriteFile(sc, []byte(`{"setup":[{"method":"tools/list"}],"steps":[{"method":"tools/call","tool":"echo","args":{"message":"{{session}}-{{random:4}}"}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runCLI(t, "", "load", "--url", url, "--sessions", "2", "--requests", "10", "-q", "--scenario", sc)
	if code != 0 || !strings.Contains(stdout, "setup tools/list") || !strings.Contains(stdout, ": 10 ok (100.00%") {
		t.Errorf("scenario: code %d\n%s\n%s", code, stdout, stderr)
	}
	// A broken threshold is exit code 3, the report still written.
	code, stdout, stderr = runCLI(t, "", "load", "--url", url, "--requests", "20", "-q",
		"--call", `tools/call echo {"message":"hi"}`, "--json", "-", "--threshold", "tools/call echo:p50<1ns")
	if code != 3 || !strings.Contains(stderr, "broken") {
		t.Errorf("threshold: code %d stderr %s", code, stderr)
	}
	var rep loadgen.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || rep.Answered != 20 {
		t.Errorf("--json -: %v, %+v", err, rep)
	}
}

// TestLoadMergeThreeProcesses runs three generator processes at once
// against one server, each with a third of the rate and its own --json,
// merges their reports with "report merge", and checks the merged
// histogram bucket by bucket against the sum of the three.
func TestLoadMergeThreeProcesses(t *testing.T) {
	bin := serveBinary(t)
	url := refURL(t, refserver.HTTPConfig{JSONResponse: true})
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, 3)
	paths := make([]string, 3)
	for i := range 3 {
		paths[i] = filepath.Join(dir, fmt.Sprintf("gen-%d.json", i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := exec.Command(bin, "load", "--url", url, "--rate", "100/s", "--duration", "1s", "--sessions", "2", "-q",
				"--call", `tools/call echo {"message":"hi"}`, "--json", paths[i]).CombinedOutput()
			if err != nil {
				errs[i] = fmt.Errorf("generator %d: %v\n%s", i, err, out)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	mergedPath := filepath.Join(dir, "all.json")
	var parts []*loadgen.Report
	for _, p := range paths {
		rep, err := readReportFile(&stdio{}, p)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, rep)
	}
	var buf strings.Builder
	st := &stdio{out: &buf, err: &buf}
	if err := reportMergeCmd().execute(t.Context(), st, append(append([]string{}, paths...), "--json", mergedPath, "--threshold", "errors<1%")); err != nil {
		t.Fatalf("merge: %v\n%s", err, buf.String())
	}
	merged, err := readReportFile(&stdio{}, mergedPath)
	if err != nil {
		t.Fatal(err)
	}
	if merged.Generators != 3 || merged.Requests != 300 || merged.Sessions != 6 || !strings.Contains(buf.String(), "3 generators merged") {
		t.Fatalf("merged: generators %d requests %d sessions %d\n%s", merged.Generators, merged.Requests, merged.Sessions, buf.String())
	}
	mh, err := merged.Find("tools/call echo").Hist()
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]int64{}
	for _, p := range parts {
		h, err := p.Find("tools/call echo").Hist()
		if err != nil {
			t.Fatal(err)
		}
		for _, bar := range h.Distribution() {
			want[bar.From] += bar.Count
		}
	}
	for _, bar := range mh.Distribution() {
		if want[bar.From] != bar.Count {
			t.Fatalf("bucket %d: merged %d, generators %d", bar.From, bar.Count, want[bar.From])
		}
		delete(want, bar.From)
	}
	for from, n := range want {
		if n != 0 {
			t.Fatalf("bucket %d: %d values lost in the merge", from, n)
		}
	}
}

// TestLoadTape runs tape-driven load from the command line: 3 virtual
// sessions replaying a recorded session against mcptape serve.
func TestLoadTape(t *testing.T) {
	bin := serveBinary(t)
	tapePath := filepath.Join("..", "..", "testdata", "analysis", "gosdk-refserver.jsonl.zst")
	code, stdout, stderr := runCLI(t, "", "load", "-q", "--tape", tapePath, "--sessions", "3", "--speed", "max", "--json", "-", "--", bin, "serve")
	if code != 0 {
		t.Fatalf("code %d\n%s\n%s", code, stdout, stderr)
	}
	var rep loadgen.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Model != "replay" || rep.Sessions != 3 || rep.Requests != 27 || rep.Setups != 3 || rep.Protocol != "2026-07-28" {
		t.Errorf("model %s sessions %d requests %d setups %d protocol %s", rep.Model, rep.Sessions, rep.Requests, rep.Setups, rep.Protocol)
	}
	for _, args := range [][]string{
		{"load", "--tape", tapePath, "--rate", "5/s", "--", bin},
		{"load", "--tape", tapePath, "--speed", "fast", "--", bin},
		{"load", "--tape", tapePath, "--session", "nosuch", "--", bin},
		{"load", "--tape", "/nonexistent.jsonl.zst", "--", bin},
	} {
		if code, _, stderr := runCLI(t, "", args...); code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%q: code %d stderr %q", args, code, stderr)
		}
	}
}

func TestLiveLineAndBar(t *testing.T) {
	l := loadgen.Live{Elapsed: 5 * time.Second, Total: 10 * time.Second, Sessions: 3, Rate: 100, Answered: 500, Errors: 9, InFlight: 3, Dropped: 1, P99: 12 * time.Millisecond,
		OK: 498, ErrorAnswers: 2, NoAnswer: 5, Cancelled: 1}
	lines := []struct {
		l    loadgen.Live
		want []string
	}{
		// the requests counted as the report's headline counts them, in
		// its words: error answers are not ok, nor are they "errors"
		// apart from those without an answer
		{l, []string{"load: 5s of 10s, 3 sessions, 100 ok/s, 3 in flight (oldest 0ns), p99 12ms\n", "\nload:   498 ok, 2 error answers, 5 no answer, 1 cancelled on purpose, 1 dropped"}},
		// one of each agrees with its noun, as in the bar ("1 sessions")
		{loadgen.Live{Sessions: 1, OK: 1, ErrorAnswers: 1, Requests: 2, Planned: 2}, []string{", 2 of 2 requests,", ", 1 session,", "   1 ok, 1 error answer"}},
		// a failure that did not happen is left out
		{loadgen.Live{OK: 7, Rate: 7}, []string{", 7 ok/s, 0 in flight", "load:   7 ok"}},
		// the p99 as the reports write latencies (3 significant digits), not 1.969226s
		{loadgen.Live{P99: 1969226 * time.Microsecond}, []string{", p99 1.97s"}},
		// a stall shows while it lasts: the oldest request in flight,
		// though no answer reached the p99 yet
		{loadgen.Live{InFlight: 2, Oldest: 12300 * time.Millisecond, P99: time.Millisecond}, []string{", 2 in flight (oldest 12.3s), p99 1ms"}},
		{loadgen.Live{}, []string{", 0 in flight, p99"}},
	}
	for _, c := range lines {
		line := liveLine(c.l)
		if strings.Contains(line, "answered") || strings.Contains(line, "error,") || strings.Contains(line, "errors") {
			t.Errorf("live line %q: answered or errors in the old sense", line)
		}
		for _, row := range strings.Split(line, "\n") {
			if len(row) > fallbackColumns {
				t.Errorf("live line %q: longer than %d columns", row, fallbackColumns)
			}
		}
		for _, want := range c.want {
			if !strings.Contains(line, want) {
				t.Errorf("live line %q lacks %q", line, want)
			}
		}
	}
	fractions := []struct {
		l    loadgen.Live
		want float64
	}{
		{l, 0.5},
		{loadgen.Live{Requests: 30, Planned: 20}, 1},
		{loadgen.Live{Requests: 5, Planned: 20, Elapsed: time.Second, Total: 2 * time.Second}, 0.5},
		{loadgen.Live{Elapsed: time.Second}, 0},
	}
	for _, c := range fractions {
		if got := runFraction(c.l); got != c.want {
			t.Errorf("fraction of %+v: %v, want %v", c.l, got, c.want)
		}
	}
}

// TestLiveBar renders the mpb bar into a buffer (mpb's WithOutput, refresh
// by hand): the figures at each refresh, the bar filling, and the final
// frame full, or where it stopped when the run was interrupted.
func TestLiveBar(t *testing.T) {
	cases := []struct {
		name        string
		l           loadgen.Live
		interrupted bool
		want        []string
		fill        int // "=" cells in the last frame, of 40
	}{
		{"duration", loadgen.Live{Elapsed: 5 * time.Second, Total: 10 * time.Second, Rate: 1234, OK: 6170, NoAnswer: 7, Errors: 7, InFlight: 9, Oldest: 2500 * time.Millisecond, P99: 12 * time.Millisecond},
			false, []string{"load 5s of 10s", "1234 ok/s, 9 in flight (oldest 2.5s), p99 12ms\n", "\n  6170 ok, 7 no answer\n"}, 40},
		{"requests interrupted", loadgen.Live{Elapsed: time.Second, Requests: 250, Planned: 1000, OK: 240, Dropped: 3, P99: time.Millisecond},
			true, []string{"load 250 of 1000 requests", "240 ok, 3 dropped", "p99 1ms"}, 10},
		{"p99 as in the reports", loadgen.Live{Elapsed: time.Second, Total: 2 * time.Second, P99: 1969226 * time.Microsecond},
			false, []string{"p99 1.97s"}, 40},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf strings.Builder
			refresh := make(chan any)
			lb := newLiveBar(&buf, mpb.WithManualRefresh(refresh), mpb.WithWidth(120))
			defer func() {
				if !strings.HasPrefix(buf.String(), "\r") {
					t.Errorf("frames do not start at the left edge: %q", buf.String())
				}
			}()
			lb.update(c.l)
			refresh <- time.Now()
			lb.finish(c.interrupted)
			out := buf.String()
			for _, want := range c.want {
				if !strings.Contains(out, want) {
					t.Errorf("bar output lacks %q:\n%s", want, out)
				}
			}
			lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
			last := lines[len(lines)-2] // the bar, over the row of counts
			open, shut := strings.Index(last, "["), strings.LastIndex(last, "]")
			if open < 0 || shut < open {
				t.Fatalf("no bar in %q", last)
			}
			cells := last[open+1 : shut]
			if n := strings.Count(cells, "="); n < c.fill*len(cells)/40-1 || n > c.fill*len(cells)/40+1 {
				t.Errorf("last frame %q: %d of %d cells filled, want about %d/40", last, n, len(cells), c.fill)
			}
		})
	}
}

func TestLoadExitCodes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	notFound := httptest.NewServer(http.NotFoundHandler())
	defer notFound.Close()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh to play a server that exits")
	}
	run := []string{"load", "--sessions", "2", "--duration", "2s", "--call", "tools/list", "-q"}
	cases := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"dead port", append(run, "--url", dead), 1, "no session could be set up: transport: connection refused"},
		{"404", append(run, "--url", notFound.URL+"/mcp"), 1, "no session could be set up: http status: 404 Not Found: 404 page not found"},
		{"missing binary", append(run, "--", "mcptape-no-such-server"), 1, "executable not found: mcptape-no-such-server"},
		{"server exits", append(run, "--timeout", "1m", "--", sh, "-c", "read line; exit 5"), 1, "no session could be set up: transport: server exited (status 5)"},
		{"ftp", append(run, "--url", "ftp://127.0.0.1/mcp"), 2, `scheme "ftp": want http, https, ws or wss`},
		{"ws dead port", append(run, "--url", "ws"+strings.TrimPrefix(dead, "http")), 1, "no session could be set up"},
		{"ws over sse", append(run, "--sse", "ws://127.0.0.1/mcp"), 2, "the legacy SSE transport is HTTP"},
		{"replay ws over sse", []string{"replay", "x.jsonl.zst", "--sse", "--url", "ws://h/mcp"}, 2, "--sse needs an http"},
		{"no scheme", append(run, "--url", "127.0.0.1:8080/mcp"), 2, "--url"},
		{"sse scheme", append(run, "--sse", "file:///sse"), 2, "--sse"},
		{"insecure stdio", append(run, "--insecure", "--", "x"), 2, "--insecure needs --url or --sse"},
		{"on-exit http", append(run, "--on-exit", "restart", "--url", dead), 2, "--on-exit applies to a stdio server"},
		{"on-exit bad", append(run, "--on-exit", "ignore", "--", "x"), 2, `--on-exit "ignore"`},
		{"replay ftp", []string{"replay", "x.jsonl.zst", "--url", "ftp://h/mcp"}, 2, "--url"},
		{"replay insecure", []string{"replay", "x.jsonl.zst", "--insecure", "--", "x"}, 2, "--insecure need --url"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, "", c.args...)
			if code != c.code || !strings.Contains(stderr, c.stderr) {
				t.Errorf("code %d stderr %q, want %d and %q", code, stderr, c.code, c.stderr)
			}
		})
	}
}

// TestLoadInterrupted: Ctrl-C (the context ends) prints the partial
// report, counts the requests in flight as cancelled and exits 130.
func TestLoadInterrupted(t *testing.T) {
	// The interrupt comes once both sessions' calls are at the server: a
	// fixed 500 ms came before the first request, during the sessions'
	// setup, when a loaded machine made that slower.
	s, err := refserver.New()
	if err != nil {
		t.Fatal(err)
	}
	ref := refserver.HTTPHandler(s, refserver.HTTPConfig{})
	calls := make(chan struct{}, 2)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"tools/call"`)) {
			select {
			case calls <- struct{}{}:
			default:
			}
		}
		ref.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	url := ts.URL + refserver.Path
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		defer cancel()
		for range cap(calls) {
			select {
			case <-calls:
			case <-ctx.Done(): // the run ended anyway
				return
			case <-time.After(20 * time.Second):
				t.Error("the sessions' calls did not reach the server in 20 s")
				return
			}
		}
	}()
	var out, errb bytes.Buffer
	code := run(ctx, &stdio{in: strings.NewReader(""), out: &out, err: &errb},
		[]string{"load", "--url", url, "--sessions", "2", "--duration", "1h", "--call", `tools/call sleep {"ms":2000}`, "-q", "--json", "-"})
	if code != 130 || !strings.Contains(errb.String(), "(interrupted)") || !strings.Contains(errb.String(), "interrupted: the report is partial") {
		t.Fatalf("code %d stderr %s", code, errb.String())
	}
	rep, err := loadgen.ReadReport(&out)
	if err != nil {
		t.Fatal(err)
	}
	var cancelled int64
	for _, e := range rep.Errors {
		if e.Class == loadgen.ClassCancelled && e.Detail == "interrupted" {
			cancelled += e.Count
		}
	}
	if !rep.Interrupted || rep.Requests == 0 || cancelled != rep.Requests-rep.Answered {
		t.Errorf("interrupted %v, %d sent, %d answered, %d cancelled: want every request in flight cancelled", rep.Interrupted, rep.Requests, rep.Answered, cancelled)
	}
}

// TestLoadInsecure: --insecure lets load talk to an https server with a
// self-signed certificate; without it the run fails saying why.
func TestLoadInsecure(t *testing.T) {
	s, err := refserver.New()
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewTLSServer(refserver.HTTPHandler(s, refserver.HTTPConfig{JSONResponse: true}))
	defer ts.Close()
	args := []string{"load", "--url", ts.URL + refserver.Path, "--requests", "5", "--call", "ping", "-q"}
	code, _, stderr := runCLI(t, "", args...)
	if code != 1 || !strings.Contains(stderr, "TLS certificate not trusted") {
		t.Errorf("without --insecure: code %d stderr %q", code, stderr)
	}
	code, stdout, stderr := runCLI(t, "", append(args, "--insecure")...)
	if code != 0 || !strings.Contains(stdout, ": 5 ok (100.00%") {
		t.Errorf("with --insecure: code %d stdout %s stderr %q", code, stdout, stderr)
	}
}

// TestLoadFindMax runs --find-max against reference servers of known
// capacity: one the first step already overloads (exit 3), one whose
// capacity (2 slots of 100 ms: 20/s) is found, with the steps in the JSON.
func TestLoadFindMax(t *testing.T) {
	limited := func(k int) string { return refURL(t, refserver.HTTPConfig{}, refserver.WithMaxConcurrency(k)) }
	common := []string{"load", "--find-max", "--call", `tools/call sleep {"ms":100}`, "--threshold", "tools/call sleep:p90<300ms",
		"--threshold", "errors<1%", "--sessions", "2", "-q"}
	dir := t.TempDir()
	noHgrm, hgrm := filepath.Join(dir, "none"), filepath.Join(dir, "hgrm")
	code, stdout, stderr := runCLI(t, "", append(common, "--url", limited(1), "--rate", "40/s", "--step-duration", "1s", "--warmup", "0s", "--hgrm", noHgrm)...)
	if code != 3 || !strings.Contains(stdout, "NOT FOUND") || !strings.Contains(stderr, "not even 40/s") || !strings.Contains(stderr, "--hgrm: no rate held") {
		t.Errorf("overloaded: code %d\n%s\n%s", code, stdout, stderr)
	}
	if _, err := os.Stat(noHgrm); !os.IsNotExist(err) {
		t.Errorf("--hgrm with no rate held: %v, want no directory", err)
	}
	out := filepath.Join(dir, "cap.json")
	code, stdout, stderr = runCLI(t, "", append(common, "--url", limited(2), "--rate", "8/s", "--max-rate", "100/s",
		"--step-duration", "2s", "--warmup", "1s", "--json", out, "--hgrm", hgrm)...)
	if code != 0 {
		t.Fatalf("code %d\n%s\n%s", code, stdout, stderr)
	}
	// --hgrm: the distributions of the step at the capacity found
	if b, err := os.ReadFile(filepath.Join(hgrm, "tools_call_sleep.hgrm")); err != nil || !strings.Contains(string(b), "Total count") {
		t.Errorf("--hgrm: %v\n%s", err, b)
	}
	fh, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	rep, err := loadgen.ReadReport(fh)
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Capacity; c == nil || c.Rate < 17 || c.Rate > 23 || len(c.Steps) != len(rep.Stages) {
		t.Errorf("capacity %+v, want about 20/s\n%s", c, stdout)
	}
	for _, bad := range [][]string{
		{"load", "--url", "http://127.0.0.1:1/mcp", "--find-max", "--call", "ping"},
		{"load", "--url", "http://127.0.0.1:1/mcp", "--find-max", "--call", "ping", "--threshold", "errors<1%", "--duration", "1s"},
		{"load", "--url", "http://127.0.0.1:1/mcp", "--call", "ping", "--duration", "1s", "--max-rate", "10/s"},
	} {
		if code, _, stderr := runCLI(t, "", bad...); code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%q: code %d, stderr %q", bad, code, stderr)
		}
	}
}

func TestLoadResults(t *testing.T) {
	url := refURL(t, refserver.HTTPConfig{})
	out := filepath.Join(t.TempDir(), "res.csv")
	code, stdout, stderr := runCLI(t, "", "load", "--url", url, "-q", "--requests", "25", "--call", "ping", "--results", out)
	if code != 0 {
		t.Fatalf("code %d\n%s\n%s", code, stdout, stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 26 || lines[0] != loadgen.ResultsCSVHeader || !strings.HasSuffix(lines[1], ",ping,ok,,ok") {
		t.Errorf("%d lines: %q", len(lines), lines[:min(3, len(lines))])
	}
	if fi, _ := os.Stat(out); !privateMode(fi) {
		t.Errorf("mode %v", fi.Mode())
	}
	if code, _, stderr := runCLI(t, "", "load", "--url", url, "-q", "--requests", "1", "--call", "ping", "--results", "r.txt"); code != 2 || !strings.Contains(stderr, ".csv") {
		t.Errorf("r.txt: %d %s", code, stderr)
	}
}

// TestScenarioExample runs the documented agent-session scenario against
// the reference server, and checks that "mcptape help scenario" shows it
// as the file holds it.
func TestScenarioExample(t *testing.T) {
	const example = "../../docs/examples/agent-session.json"
	url := refURL(t, refserver.HTTPConfig{})
	code, stdout, stderr := runCLI(t, "", "load", "--url", url, "-q", "--scenario", example, "--sessions", "4", "--duration", "1500ms")
	if code != 0 {
		t.Fatalf("code %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"setup tools/list", "setup prompts/list", "tools/call echo", "resources/read", " 0 not ok"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	code, help, _ := runCLI(t, "", "help", "scenario")
	data, err := os.ReadFile(example)
	if code != 0 || err != nil {
		t.Fatalf("help: %d, %v", code, err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if !strings.Contains(help, strings.TrimSpace(l)) {
			t.Errorf("help scenario lacks the example's line %q", l)
		}
	}
}
