package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/loadgen"
)

// The HTTP dialect of the LangGraph MCP docs (serve --dialect langgraph):
// POST /mcp answered with plain JSON and no session, the chat tool's
// chunks on the event stream GET /mcp/stream. Recorded through the
// proxy, inspected, replayed and loaded with the built commands.

var langGraphListening = regexp.MustCompile(`^listening on (http://127\.0\.0\.1:[0-9]+/mcp)$`)

// startLangGraph runs `mcptape serve --http 127.0.0.1:0 --dialect
// langgraph --stream-chunks N --chunk-delay D` and returns it and its URL.
func startLangGraph(t *testing.T, chunks, delay string) (*serveProc, string) {
	t.Helper()
	p := startServe(t, "--http", "127.0.0.1:0", "--dialect", "langgraph", "--stream-chunks", chunks, "--chunk-delay", delay)
	m := langGraphListening.FindStringSubmatch(p.line(t))
	if m == nil {
		t.Fatal("first stderr line is not 'listening on http://ADDR/mcp'")
	}
	if l := p.line(t); !strings.HasSuffix(l, "/mcp/stream") {
		t.Fatalf("second stderr line %q does not name the stream", l)
	}
	return p, m[1]
}

// langGraphClients are the clients recorded: mcptape's own load client
// (one session, four calls in flight, on keep-alive connections) and the
// independent stdlib Python client (a connection per POST, uuid ids).
var langGraphClients = []struct {
	name  string
	calls int64
	run   func(t *testing.T, url string, env ...string)
}{
	{"load", 8, func(t *testing.T, url string, _ ...string) {
		code, out, stderr := runCLI(t, "", "load", "--url", url, "--stream-path", "/mcp/stream", "--sessions", "1", "--inflight", "4",
			"--requests", "8", "-q", "--call", `tools/call chat {"query":"hi there"}`)
		if code != 0 || !strings.Contains(out, "8 ok (") {
			t.Fatalf("load through the proxy: exit %d\n%s%s", code, out, stderr)
		}
	}},
	{"python", 3, func(t *testing.T, url string, env ...string) {
		py := pythonPeer(t)[0]
		cmd := exec.Command(py, filepath.Join("..", "..", "testdata", "streampeer", "langgraph_http_client.py"), url)
		cmd.Env = append(os.Environ(), append([]string{"CALLS=3"}, env...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("python client: %v\n%s", err, out)
		}
	}},
}

// TestLangGraphHTTPRecordInspectReplayLoad records both clients against
// the LangGraph dialect, checks that inspect pairs every chunk with its
// request, replays the tape and loads the server with the chat tool.
func TestLangGraphHTTPRecordInspectReplayLoad(t *testing.T) {
	_, url := startLangGraph(t, "4", "3ms")
	for _, c := range langGraphClients {
		t.Run(c.name, func(t *testing.T) {
			tp := filepath.Join(t.TempDir(), "lg.jsonl.zst")
			rec := startHTTPRecord(t, "--listen", "127.0.0.1:0", "--upstream", url, "-o", tp)
			c.run(t, rec.url)
			if err := rec.stop(); err != nil {
				t.Fatalf("record: %v\n%s", err, rec.stderr)
			}
			_, out, stderr := runCLI(t, "", "inspect", "--format", "json", tp)
			var rep streamFigures
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("inspect: %v: %s %s", err, out, stderr)
			}
			if st := rep.Streams; st == nil || st.Operations != c.calls || st.Unfinished != 0 || st.Chunks != c.calls*6 || st.Usage.TotalTokens == 0 {
				t.Errorf("streams %+v, want %d answers of 6 parts, none unfinished", st, c.calls)
			}
			for _, v := range rep.Violations {
				if v.Rule == "response-unknown-id" {
					t.Errorf("chunks of the side stream reported as %s ×%d", v.Rule, v.Count)
				}
			}
			code, out, stderr := runCLI(t, "", "replay", tp, "--all", "--concurrency", "4", "--timeout", "10s", "--url", url)
			if code != 0 || !strings.Contains(out, "streamed answers") {
				t.Errorf("replay: exit %d\n%s%s", code, out, stderr)
			}
		})
	}
	code, out, stderr := runCLI(t, "", "load", "--url", url, "--stream-path", "/mcp/stream", "--sessions", "3", "--inflight", "2",
		"--requests", "18", "-q", "--json", "-", "--call", `tools/call chat {"query":"hi"}`)
	if code != 0 {
		t.Fatalf("load: exit %d\n%s%s", code, out, stderr)
	}
	var rep loadgen.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	first, complete := rep.Find("tools/call chat"+loadgen.FirstChunkSuffix), rep.Find("tools/call chat"+loadgen.CompleteSuffix)
	if first == nil || complete == nil || first.Count != 18 || complete.Count != 18 || rep.ErrorTotal != 0 {
		t.Fatalf("load report: first %+v complete %+v errors %v", first, complete, rep.Errors)
	}
	// Each answer's first part comes before its end (not every first
	// part before every end: on a loaded machine the slowest first part
	// came 281 ms in, after the quickest end at 20 ms).
	checkFirstBeforeEnd(t, first, complete)
}

// TestLangGraphHTTPCutStream: a stream the client cut before its end
// part is unfinished in inspect and makes replay exit 1 at once; a live
// server that dies mid-stream fails the replay (exit 2) at once too.
func TestLangGraphHTTPCutStream(t *testing.T) {
	_, url := startLangGraph(t, "20", "20ms")
	tp := filepath.Join(t.TempDir(), "cut.jsonl.zst")
	rec := startHTTPRecord(t, "--listen", "127.0.0.1:0", "--upstream", url, "-o", tp)
	langGraphClients[1].run(t, rec.url, "CUT=1")
	if err := rec.stop(); err != nil {
		t.Fatalf("record: %v\n%s", err, rec.stderr)
	}
	_, out, _ := runCLI(t, "", "inspect", "--format", "json", tp)
	var rep streamFigures
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Streams == nil || rep.Streams.Unfinished == 0 {
		t.Fatalf("streams %+v, want unfinished ones", rep.Streams)
	}
	start := time.Now()
	code, out, stderr := runCLI(t, "", "replay", tp, "--all", "--timeout", "5s", "--url", url)
	if code != 1 || !strings.Contains(out, "unfinished") || time.Since(start) > 10*time.Second {
		t.Errorf("replay of the cut tape: exit %d after %v, want 1, unfinished, soon\n%s%s", code, time.Since(start), out, stderr)
	}

	// A whole tape against a server killed while it streams.
	whole := filepath.Join(t.TempDir(), "whole.jsonl.zst")
	rec = startHTTPRecord(t, "--listen", "127.0.0.1:0", "--upstream", url, "-o", whole)
	langGraphClients[1].run(t, rec.url)
	if err := rec.stop(); err != nil {
		t.Fatal(err)
	}
	// Killed once a chat chunk has passed to the replay: a fixed 300 ms
	// after the server's start came before the replay reached the stream
	// when a loaded machine made the replay that much slower.
	p, live := startLangGraph(t, "50", "20ms")
	dying := killMidStream(t, live, func() { _ = p.cmd.Process.Kill() })
	start = time.Now()
	code, out, stderr = runCLI(t, "", "replay", whole, "--all", "--concurrency", "8", "--timeout", "20s", "--url", dying)
	if code != 2 || !strings.Contains(out, "ended") || time.Since(start) > 10*time.Second {
		t.Errorf("replay against a dying server: exit %d after %v, want 2, the stream's end named, soon\n%s%s", code, time.Since(start), out, stderr)
	}
}

// killMidStream serves a TCP relay to the server at rawURL and returns the
// URL through it. kill is called, once, right after the first chat chunk
// (a content_delta result) has passed from the server to a client. A
// connection whose server side fails is reset on the client side too, as
// the server's own would be.
func killMidStream(t *testing.T, rawURL string, kill func()) string {
	t.Helper()
	host := strings.TrimPrefix(rawURL, "http://")
	host, path, _ := strings.Cut(host, "/")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		once sync.Once
		wg   sync.WaitGroup
	)
	relay := func(c net.Conn) {
		defer c.Close()
		up, err := net.Dial("tcp", host)
		if err != nil {
			c.(*net.TCPConn).SetLinger(0) // reset, as a refused dial is
			return
		}
		defer up.Close()
		go func() {
			io.Copy(up, c)
			up.(*net.TCPConn).CloseWrite()
		}()
		// (The marker, quoted, is not in the tool's description; tail
		// holds the last bytes of the previous read: a marker may span two.)
		marker := []byte(`"type":"content_delta"`)
		var tail []byte
		buf := make([]byte, 32<<10)
		for {
			n, err := up.Read(buf)
			if n > 0 {
				if _, werr := c.Write(buf[:n]); werr != nil {
					return
				}
				seen := append(tail, buf[:n]...)
				if bytes.Contains(seen, marker) {
					once.Do(kill)
				}
				tail = append(tail[:0], seen[max(0, len(seen)-len(marker)+1):]...)
			}
			if err != nil {
				if !errors.Is(err, io.EOF) {
					c.(*net.TCPConn).SetLinger(0)
				}
				return
			}
		}
	}
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { relay(c) })
		}
	})
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return "http://" + ln.Addr().String() + "/" + path
}
