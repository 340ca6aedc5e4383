package main

import (
	"path/filepath"
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

	outcomeEverywhere(t, tp, "client-eof", "tools/call", "client_gone", "client_gone", 0, false)
}
