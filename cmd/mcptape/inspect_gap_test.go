package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/tapetest"
	"github.com/mcptape/mcptape/tape"
)

// TestLostInGapEverywhere: a rotated recording whose middle tape, the one
// holding the answer to a tools/call, is missing; the recording ended by
// the recorder's shutdown with the session open. The answer is unknown,
// not cut by the shutdown: every output says lost_in_gap (no failure of
// the server's), and check fails on the gap itself (incomplete). A
// request sent after the gap and answered stays ok.
func TestLostInGapEverywhere(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	last := tapetest.Messages("S1", now.Add(2*time.Second),
		`> {"jsonrpc":"2.0","id":3,"method":"ping"}`,
		`< {"jsonrpc":"2.0","id":3,"result":{}}`)
	last = append(last, &tape.Record{Type: tape.TypeEvent, Time: now.Add(3 * time.Second).UnixNano(), Session: "S1",
		Event: tape.EventClose, Data: []byte(`{"by":"proxy","reason":"shutdown"}`)})
	paths := tapetest.WriteRotated(t, filepath.Join(dir, "r.jsonl.zst"), tape.Header{Version: "test", Transport: "http"},
		tapetest.Messages("S1", now,
			`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`,
			`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`> {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow"}}`),
		tapetest.Messages("S1", now.Add(time.Second), `< {"jsonrpc":"2.0","id":2,"result":{"content":[]}}`),
		last)
	if err := os.Remove(paths[1]); err != nil {
		t.Fatal(err)
	}
	outcomeEverywhere(t, dir, "proxy", "tools/call", "lost_in_gap", "lost_in_gap", 1, false)
	if code, out, _ := runCLI(t, "", "inspect", dir); code != 0 || !strings.Contains(out, "with no answer in the tape, sent before records it is missing") || !strings.Contains(out, "LOST IN A GAP  1") {
		t.Errorf("inspect: exit %d, want the lost-in-gap problem and list:\n%s", code, out)
	}
	if code, out, _ := runCLI(t, "", "check", dir); !strings.Contains(out, "incomplete") {
		t.Errorf("check: exit %d, want incomplete named:\n%s", code, out)
	}
	html := filepath.Join(t.TempDir(), "r.html")
	if code, _, stderr := runCLI(t, "", "report", dir, "-o", html); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	if data, err := os.ReadFile(html); err != nil || !strings.Contains(string(data), "answer unknown") {
		t.Errorf("report: the timeline does not name the outcome lost_in_gap (%v)", err)
	}
}
