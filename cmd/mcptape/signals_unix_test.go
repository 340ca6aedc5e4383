//go:build unix

package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/tape"
)

// initializeBody is an initialize request, for a client of few words.
const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// postMCP posts body to a Streamable HTTP endpoint and returns the answer.
func postMCP(t *testing.T, url, body string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var proxyingRE = regexp.MustCompile(`proxying (http://127\.0\.0\.1:\d+/\S*) to `)

// startRecordProxy starts `mcptape record --upstream up --listen
// 127.0.0.1:0 -o TAPE args...` and returns it, the URL it proxies at and
// the tape's path.
func startRecordProxy(t *testing.T, up string, args ...string) (*serveProc, string, string) {
	t.Helper()
	tp := filepath.Join(t.TempDir(), "t.jsonl.zst")
	p := startMcptape(t, append([]string{"record", "--upstream", up, "--listen", "127.0.0.1:0", "-o", tp}, args...)...)
	m := proxyingRE.FindStringSubmatch(p.line(t))
	if m == nil {
		t.Fatal("record's first stderr line does not say where it listens")
	}
	return p, m[1], tp
}

// tapeEvents returns the names of the events of a cleanly closed tape,
// and its messages.
func tapeEvents(t *testing.T, path string) (events []string, messages int) {
	t.Helper()
	_, recs := readTapeFile(t, path)
	for _, r := range recs {
		switch r.Type {
		case tape.TypeEvent:
			events = append(events, r.Event)
		case tape.TypeMessage:
			messages++
		}
	}
	return events, messages
}

// TestRecordHTTPSignals: SIGHUP (the terminal closed) ends HTTP mode as
// SIGINT and SIGTERM do: what was recorded is flushed, the sessions get
// their close event, the tape its stats, and record exits 0. (SIGHUP
// killed it, exit 129, the last flush and the final records lost.)
func TestRecordHTTPSignals(t *testing.T) {
	up := refURL(t, refserver.HTTPConfig{})
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			p, url, tp := startRecordProxy(t, up)
			if got := postMCP(t, url, initializeBody); !strings.Contains(got, `"protocolVersion"`) {
				t.Fatalf("initialize answered %q", got)
			}
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if code := p.wait(t); code != 0 {
				t.Errorf("exit code %d after %v, want 0", code, sig)
			}
			events, messages := tapeEvents(t, tp)
			if messages != 2 || !slices.Contains(events, tape.EventClose) || events[len(events)-1] != tape.EventStats {
				t.Errorf("after %v: %d messages, events %v; want the initialize and its answer, a close event, stats last", sig, messages, events)
			}
		})
	}
}

// TestRecordStdioSIGHUP: SIGHUP reaches a stdio record as SIGINT does:
// forwarded to the server, which it ends (the helper does not catch it),
// and the tape gets the server's exit and close events; record exits
// with the server's code, 128+SIGHUP. (SIGHUP killed record, the tape cut
// before them.)
func TestRecordStdioSIGHUP(t *testing.T) {
	tp := filepath.Join(t.TempDir(), "t.jsonl.zst")
	p := startMcptapeEnv(t, []string{recordHelperEnv + "=1"}, append([]string{"record", "-o", tp, "--"}, helperArgv()...)...)
	p.awaitEcho(t)
	if err := p.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t); code != 128+int(syscall.SIGHUP) {
		t.Errorf("exit code %d, want %d (the server's: SIGHUP)", code, 128+int(syscall.SIGHUP))
	}
	events, messages := tapeEvents(t, tp)
	if messages != 2 || !slices.Contains(events, tape.EventExit) || !slices.Contains(events, tape.EventClose) || events[len(events)-1] != tape.EventStats {
		t.Errorf("%d messages, events %v; want the request and its echo, exit and close events, stats last", messages, events)
	}
}

// watchedRefURL serves the reference server and returns its URL and a
// channel that gets a value (when it has room) at each request.
func watchedRefURL(t *testing.T) (string, <-chan struct{}) {
	t.Helper()
	s, err := refserver.New()
	if err != nil {
		t.Fatal(err)
	}
	ref := refserver.HTTPHandler(s, refserver.HTTPConfig{})
	hits := make(chan struct{}, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case hits <- struct{}{}:
		default:
		}
		ref.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts.URL + refserver.Path, hits
}

// TestInterruptedExitCodes: load and replay stopped by signal N print
// their partial report and exit 128+N, as a shell reports a process that
// N killed: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP (they exited
// 130 whatever the signal); replay says, as it stops, what it waits for.
// mock, a server, stops on each as on the end of its client: report,
// exit 0.
func TestInterruptedExitCodes(t *testing.T) {
	tests := []struct {
		name  string
		args  func(url string) []string
		ready string // a stderr line to wait for; "" waits for a request at the server
		sig   syscall.Signal
		code  int
		out   string // on stdout or stderr
	}{
		{"load", loadArgs, "", syscall.SIGINT, 130, "interrupted by SIGINT: the report is partial"},
		{"load", loadArgs, "", syscall.SIGTERM, 143, "interrupted by SIGTERM: the report is partial"},
		{"load", loadArgs, "", syscall.SIGHUP, 129, "interrupted by SIGHUP: the report is partial"},
		{"replay", replayArgs, "", syscall.SIGINT, 130, "mcptape replay: stopping: closing the sessions, up to 4s (a stdio server's exit, an HTTP DELETE's answer); a second Ctrl-C (or signal) cuts that short"},
		{"replay", replayArgs, "", syscall.SIGTERM, 143, "interrupted by SIGTERM: the report is partial"},
		{"replay", replayArgs, "", syscall.SIGHUP, 129, `session "stdio-1"`},
		{"mock", mockArgs, "listening on", syscall.SIGTERM, 0, "requests matched"},
		{"mock", mockArgs, "listening on", syscall.SIGHUP, 0, "requests matched"},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/"+tt.sig.String(), func(t *testing.T) {
			url, hits := watchedRefURL(t)
			p := startMcptape(t, tt.args(url)...)
			var stderr strings.Builder
			if tt.ready == "" {
				select {
				case <-hits:
				case <-time.After(10 * time.Second):
					t.Fatal("no request at the server within 10 s")
				}
			} else {
				for l := p.line(t); !strings.Contains(l, tt.ready); l = p.line(t) {
					stderr.WriteString(l + "\n")
				}
			}
			if err := p.cmd.Process.Signal(tt.sig); err != nil {
				t.Fatal(err)
			}
			for l := range p.lines {
				stderr.WriteString(l + "\n")
			}
			if code := p.wait(t); code != tt.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tt.code, stderr.String())
			}
			if all := p.stdout.String() + stderr.String(); !strings.Contains(all, tt.out) {
				t.Errorf("output has no %q:\n%s", tt.out, all)
			}
		})
	}
}

func loadArgs(url string) []string {
	return []string{"load", "--url", url, "--duration", "1h", "--call", `tools/call sleep {"ms":60000}`, "-q"}
}

// replayArgs replays a stdio tape over HTTP, its recorded spacing times
// 1000 (the slowest speed): the replay is still waiting when the signal
// comes.
func replayArgs(url string) []string {
	return []string{"replay", basicTape, "--url", url, "--speed", "0.001"}
}

func mockArgs(string) []string { return []string{"mock", basicTape, "--http", "127.0.0.1:0"} }

// TestRecordSecondSignal: the first SIGINT lets open exchanges finish
// (here for up to --grace 1m) and says so; a second one stops at once,
// the tape closed with everything recorded: the request, its exchange
// cut by the proxy, the stats. (A second Ctrl-C changed nothing: the
// drain ran its full time.)
func TestRecordSecondSignal(t *testing.T) {
	arrived := make(chan struct{}, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		arrived <- struct{}{}
		<-r.Context().Done() // never answers: the exchange stays open
	}))
	t.Cleanup(up.Close)
	p, url, tp := startRecordProxy(t, up.URL+"/mcp", "--grace", "1m")
	go func() {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initializeBody))
		req.Header.Set("Content-Type", "application/json")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	select {
	case <-arrived:
	case <-time.After(10 * time.Second):
		t.Fatal("the request did not reach the upstream within 10 s")
	}
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	p.lineWith(t, "mcptape record: stopping: 1 open exchange may finish within 1m0s; a second Ctrl-C (or signal) stops at once")
	start := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t); code != 0 {
		t.Errorf("exit code %d after the second SIGINT, want 0", code)
	}
	t.Logf("stopped %v after the second SIGINT", time.Since(start))
	_, recs := readTapeFile(t, tp)
	var msgs, cut int
	for _, r := range recs {
		switch {
		case r.Type == tape.TypeMessage:
			msgs++
		case r.Event == tape.EventHTTP && strings.Contains(string(r.Data), `"closed_by":"proxy"`):
			cut++
		}
	}
	if msgs != 1 || cut != 1 || recs[len(recs)-1].Event != tape.EventStats {
		t.Errorf("%d messages, %d exchanges cut by the proxy, last record %+v; want the request, its exchange cut, stats last", msgs, cut, recs[len(recs)-1])
	}
}

// TestLoadSecondSignal: at the first SIGINT load stops its stdio servers
// gracefully (stdin closed, --grace, SIGTERM, --grace, SIGKILL); a second
// one kills them at once. The server here exits at the end of its stdin,
// but its shell then goes on, ignoring SIGTERM; --grace is a minute: only
// the second signal ends the run in time. (A second Ctrl-C changed
// nothing: two graces.)
func TestLoadSecondSignal(t *testing.T) {
	bin := serveBinary(t)
	dir := t.TempDir()
	seen, stopping, pidFile := filepath.Join(dir, "requests"), filepath.Join(dir, "stopping"), filepath.Join(dir, "pid")
	server := fmt.Sprintf(`echo $$ > %s; tee %s | %s serve; touch %s; trap "" TERM; exec sleep 300`,
		strconv.Quote(pidFile), strconv.Quote(seen), strconv.Quote(bin), strconv.Quote(stopping))
	t.Cleanup(func() { // a failed run leaves no sleeper behind (it ignores SIGTERM)
		if b, err := os.ReadFile(pidFile); err == nil {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	p := startMcptape(t, "load", "--grace", "1m", "--duration", "1h", "-q", "--call", `tools/call echo {"message":"hi"}`, "--", "sh", "-c", server)
	// waitFile waits for path to hold want.
	waitFile := func(path, want, what string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if b, err := os.ReadFile(path); err == nil && strings.Contains(string(b), want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s within 10 s", what)
			}
		}
	}
	waitFile(seen, `"tools/call"`, "no call reached the server")
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	// The server saw its stdin end: the graceful stop is under way (a
	// second signal sent before the first was taken would merge with it).
	waitFile(stopping, "", "the server's stdin did not end")
	// It says what it waits for, and how to cut it short (it said
	// nothing: a run that seemed to hang).
	p.lineWith(t, "mcptape load: stopping: closing the sessions, up to 2m0s (a stdio server's exit, an HTTP DELETE's answer); a second Ctrl-C (or signal) cuts that short")
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t); code != 130 {
		t.Errorf("exit code %d, want 130", code)
	}
	if !strings.Contains(p.stdout.String(), "interrupted") {
		t.Errorf("no partial report on stdout:\n%s", p.stdout.String())
	}
}

// lineWith reads p's stderr lines until one holds want, failing when none
// comes within 10 s.
func (p *serveProc) lineWith(t *testing.T, want string) {
	t.Helper()
	var seen []string
	for deadline := time.After(10 * time.Second); ; {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatalf("mcptape closed its stderr without %q; it wrote %q", want, seen)
			}
			if strings.Contains(l, want) {
				return
			}
			seen = append(seen, l)
		case <-deadline:
			t.Fatalf("no stderr line %q within 10 s; it wrote %q", want, seen)
		}
	}
}

// TestRecordStdioFirstSignalSaysWaiting: at the first SIGINT a stdio
// record forwards it and waits for the server to exit (here one that
// ignores SIGINT and SIGTERM, for up to twice --grace); it says so on
// stderr, with how to cut it short (it said nothing: the user thought it
// hung). The second SIGINT kills the server at once.
func TestRecordStdioFirstSignalSaysWaiting(t *testing.T) {
	tp := filepath.Join(t.TempDir(), "t.jsonl.zst")
	p := startMcptape(t, "record", "-o", tp, "--grace", "30s", "--", "sh", "-c", `trap "" INT TERM; exec cat`)
	p.awaitEcho(t)
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	p.lineWith(t, "mcptape record: stopping: waiting up to 1m0s for the server to exit; a second Ctrl-C (or signal) kills it at once")
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := p.wait(t); code != 128+int(syscall.SIGKILL) {
		t.Errorf("exit code %d, want %d (the server's: SIGKILL)", code, 128+int(syscall.SIGKILL))
	}
}

// awaitEcho writes a request to a stdio record whose server echoes its
// input and waits for the echo: the server is running and record past its
// setup.
func (p *serveProc) awaitEcho(t *testing.T) {
	t.Helper()
	if _, err := io.WriteString(p.stdin, initializeBody+"\n"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(p.stdout.String(), "\n"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no echo within 10 s")
		}
	}
}
