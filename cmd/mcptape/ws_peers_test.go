package main

import (
	"context"
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
	if code, stdout, stderr := runMcptape(t, "", "inspect", out); code != 0 || !strings.Contains(stdout, "client mcptape-ws-peer 1.0.0") {
		t.Errorf("inspect: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
