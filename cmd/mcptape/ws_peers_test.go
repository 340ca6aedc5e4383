package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/loadgen"
	"github.com/mcptape/mcptape/tape"
)

// runTSWebSocketClient runs the TypeScript SDK's client over WebSocket
// (testdata/wspeer/client.mjs) against url and returns its one JSON line.
func runTSWebSocketClient(t *testing.T, p *peertest.ConformancePeers, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.Node, filepath.Join("..", "..", "testdata", "wspeer", "client.mjs"), url)
	cmd.Env = append(os.Environ(), "MCPTAPE_SDK="+p.Dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("TypeScript SDK client on %s: %v\n%s", url, err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// TestTypeScriptClientOverWebSocket: the TypeScript SDK's
// WebSocketClientTransport lists and calls tools on `mcptape serve --ws`,
// directly and through `mcptape record`, with the same results both ways,
// and the tape holds the whole conversation.
func TestTypeScriptClientOverWebSocket(t *testing.T) {
	peers := peertest.Conformance(t)
	upstream := serveWS(t)
	direct := runTSWebSocketClient(t, peers, upstream)
	for _, want := range []string{`"tools":["add","ask","blob","echo","fail","sleep"]`, `"text":"hi over ws"`, `"sum":5`} {
		if !strings.Contains(direct, want) {
			t.Fatalf("direct answer lacks %s:\n%s", want, direct)
		}
	}

	out := filepath.Join(t.TempDir(), "ts.jsonl.zst")
	rec, proxy := startWSRecord(t, upstream, out)
	through := runTSWebSocketClient(t, peers, proxy)
	if through != direct {
		t.Errorf("through the recorder:\n%s\ndirect:\n%s", through, direct)
	}
	stopWSRecord(t, rec)

	// The tape is complete: every request answered, both closes recorded.
	r, err := tape.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var methods []string
	var c2s, s2c, closes int
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case rec.Session != "ws-1" && rec.Type != tape.TypeHeader && rec.Event != tape.EventStats:
			t.Errorf("record of session %q", rec.Session)
		case rec.Type == tape.TypeMessage && rec.Dir == tape.ClientToServer:
			c2s++
			if mm := regexp.MustCompile(`"method":"([^"]+)"`).FindSubmatch(rec.Frame); mm != nil {
				methods = append(methods, string(mm[1]))
			}
		case rec.Type == tape.TypeMessage:
			s2c++
		case rec.Event == tape.EventClose:
			closes++
		}
	}
	want := "initialize notifications/initialized tools/list tools/call tools/call"
	if strings.Join(methods, " ") != want || c2s != 5 || s2c != 4 || closes != 1 {
		t.Errorf("tape: client methods %q (want %q), %d server messages (want 4), %d close events", methods, want, s2c, closes)
	}
	if code, stdout, stderr := runCLI(t, "", "inspect", out); code != 0 || !strings.Contains(stdout, "client mcptape-ws-peer 1.0.0") {
		t.Errorf("inspect: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// startTSWebSocketServer runs the TypeScript SDK's Server bridged to npm's
// ws package (testdata/wspeer/server.mjs) for the test and returns its
// ws:// URL.
func startTSWebSocketServer(t *testing.T, p *peertest.ConformancePeers) string {
	t.Helper()
	cmd := exec.Command(p.Node, filepath.Join("..", "..", "testdata", "wspeer", "server.mjs"))
	cmd.Env = append(os.Environ(), "MCPTAPE_SDK="+p.Dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	first := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Scan()
		first <- sc.Text()
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case l := <-first:
		url, ok := strings.CutPrefix(l, "listening on ")
		if !ok || !strings.HasPrefix(url, "ws://127.0.0.1:") {
			t.Fatalf("TypeScript SDK server: first line %q\n%s", l, stderr.String())
		}
		return url
	case <-time.After(60 * time.Second):
		t.Fatalf("TypeScript SDK server did not listen within 60 s\n%s", stderr.String())
	}
	return ""
}

// loadReport runs `mcptape load --url url -q --json -` with args and
// returns its report, failing on a non-zero exit.
func loadReport(t *testing.T, url string, args ...string) *loadgen.Report {
	t.Helper()
	code, stdout, stderr := runCLI(t, "", append([]string{"load", "--url", url, "-q", "--json", "-"}, args...)...)
	if code != 0 {
		t.Fatalf("load %s: exit %d\n%s\n%s", url, code, stdout, stderr)
	}
	var rep loadgen.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("load report: %v\n%s", err, stdout)
	}
	return &rep
}

// TestTypeScriptServerOverWebSocket: the TypeScript SDK's Server on a
// WebSocket server of npm's ws package is recorded through `mcptape
// record --upstream ws://`, the tape replays against it with the same
// answers, and a short load run on it has no errors.
func TestTypeScriptServerOverWebSocket(t *testing.T) {
	peers := peertest.Conformance(t)
	upstream := startTSWebSocketServer(t, peers)
	echo, add := `tools/call echo {"message":"hi over ws"}`, `tools/call add {"a":2,"b":3}`

	// Two sessions through the recorder, one per tool (load picks among
	// several --call at random; one each keeps the tape predictable).
	out := filepath.Join(t.TempDir(), "tsserver.jsonl.zst")
	rec, proxy := startWSRecord(t, upstream, out)
	for _, call := range []string{echo, add} {
		if rep := loadReport(t, proxy, "--call", call, "--requests", "5"); rep.Answered != 5 || rep.ErrorTotal != 0 {
			t.Errorf("load %s through the recorder: %d answered, %d errors (want 5, 0)", call, rep.Answered, rep.ErrorTotal)
		}
	}
	stopWSRecord(t, rec)
	code, stdout, stderr := runCLI(t, "", "inspect", out)
	for _, want := range []string{"server mcptape-ws-ts-server 1.0.0", "tools    echo 5\n", "tools    add 5\n"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("inspect: exit %d, no %q\n%s\n%s", code, want, stdout, stderr)
		}
	}

	code, stdout, stderr = runCLI(t, "", "replay", out, "--all", "--speed", "max", "--format", "json", "--url", upstream)
	if code != 0 {
		t.Fatalf("replay: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var rep struct {
		Sessions []struct{ Matched, Differed, Missing, Extra int }
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || len(rep.Sessions) != 2 {
		t.Fatalf("replay report %v: %s", err, stdout)
	}
	for i, s := range rep.Sessions { // initialize and 5 calls each
		if s.Matched != 6 || s.Differed+s.Missing+s.Extra != 0 {
			t.Errorf("replay session %d: %+v (want 6 matched, nothing else)", i, s)
		}
	}

	calls := []string{"--call", echo, "--call", add}
	if rep := loadReport(t, upstream, append(calls, "--requests", "20")...); rep.Answered != 20 || rep.ErrorTotal != 0 {
		t.Errorf("load: %d answered, %d errors (want 20, 0)", rep.Answered, rep.ErrorTotal)
	}
}
