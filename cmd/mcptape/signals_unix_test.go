//go:build unix

package main

import (
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
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
	if _, err := io.WriteString(p.stdin, initializeBody+"\n"); err != nil {
		t.Fatal(err)
	}
	// The echo shows the server running and record past its setup.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(p.stdout.String(), "\n"); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no echo within 10 s")
		}
	}
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
