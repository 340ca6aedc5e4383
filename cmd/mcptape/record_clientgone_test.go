package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	// The client waits for the answer to initialize, as MCP clients do,
	// before it sends the tool call and closes its input: all sent at
	// once, the --grace after the end of the input ran out on a loaded
	// machine before the server had even started, and it answered
	// nothing (initialize gone too).
	initialize := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}` + "\n"
	rest := strings.Join([]string{
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":30,"steps":3}}}`,
	}, "\n") + "\n"
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	answered := make(chan struct{})
	go func() { // the client's side: closes answered at the answer to initialize
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var msg struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(sc.Bytes(), &msg) == nil && string(msg.ID) == "1" {
				close(answered)
				break
			}
		}
		io.Copy(io.Discard, outR)
	}()
	go func() {
		defer inW.Close()
		if _, err := io.WriteString(inW, initialize); err != nil {
			return
		}
		select {
		case <-answered:
			io.WriteString(inW, rest)
		case <-time.After(2 * time.Minute): // a server that never answers fails below, not hangs
		}
	}()
	var errb bytes.Buffer
	code := run(context.Background(), &stdio{in: inR, out: outW, err: &errb}, append([]string{"record", "-o", tp, "--grace", "3s", "--"}, argv...))
	outW.Close()
	if code > 1 && code < 128 {
		t.Fatalf("record: exit %d: %s", code, errb.String())
	}

	outcomeEverywhere(t, tp, "client-eof", "tools/call", "client_gone", "client_gone", 0, false)
}
