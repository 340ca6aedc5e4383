package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
)

// TestRecordClientGoneEverything records the real server-everything over
// stdio for a client that starts a long-running tool call and closes its
// input at once: the server does not answer before it exits (by itself
// or ended by the recorder after --grace). Every output says the client
// left before the answer: inspect (client_gone, no unanswered), check
// (passes: not the server's doing), the requests table and the OTLP
// export (no error status).
func TestRecordClientGoneEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("real peers")
	}
	argv := append(peertest.ServerEverything(t), "stdio")
	tp := filepath.Join(t.TempDir(), "gone.jsonl.zst")
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":30,"steps":3}}}`,
	}, "\n") + "\n"
	if code, _, stderr := runCLI(t, in, append([]string{"record", "-o", tp, "--grace", "3s", "--"}, argv...)...); code > 1 && code < 128 {
		t.Fatalf("record: exit %d: %s", code, stderr)
	}

	code, out, stderr := runCLI(t, "", "inspect", "--format", "json", tp)
	if code != 0 {
		t.Fatalf("inspect: exit %d: %s", code, stderr)
	}
	var rep struct {
		Unanswered struct {
			Count      int64 `json:"count"`
			ClientGone int64 `json:"client_gone"`
		} `json:"unanswered"`
		Sessions []struct {
			ClosedBy string `json:"closed_by"`
		} `json:"sessions"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Unanswered.Count != 0 || rep.Unanswered.ClientGone != 1 || len(rep.Sessions) != 1 || rep.Sessions[0].ClosedBy != "client-eof" {
		t.Fatalf("inspect: %+v, want the tool call client_gone, closed by client-eof:\n%s", rep, out)
	}
	if code, out, _ := runCLI(t, "", "check", tp); code != 0 {
		t.Errorf("check: exit %d, want 0:\n%s", code, out)
	}
	code, out, stderr = runCLI(t, "", "export", "--format", "requests", tp)
	if code != 0 {
		t.Fatalf("export requests: exit %d: %s", code, stderr)
	}
	var outcomes []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var row struct {
			Method  string `json:"method"`
			Outcome string `json:"outcome"`
		}
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatal(err)
		}
		outcomes = append(outcomes, row.Method+" "+row.Outcome)
	}
	if !slices.Contains(outcomes, "tools/call client_gone") {
		t.Errorf("requests table outcomes %q, want tools/call client_gone", outcomes)
	}
	code, out, stderr = runCLI(t, "", "export", "--format", "otlp", tp)
	if code != 0 || !strings.Contains(out, `"client_gone"`) || strings.Contains(out, `"error.type"`) {
		t.Errorf("export otlp: exit %d, want the span's outcome client_gone and no error: %s\n%s", code, stderr, out)
	}
}
