package replay

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/internal/tapetest"
	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// TestReplayAnswerRefusedEverything records a Go SDK client answering the
// sampling request of server-everything's trigger-sampling-request over
// Streamable HTTP, makes the recorded answer one the server's HTTP layer
// refuses (a result that is not an object: 400, "Invalid JSON-RPC
// message"), and replays it against a fresh server-everything: the report
// names the refusal (a problem of kind refused) and the replay goes on.
// The server, with no sampling result, never answers the tool call: the
// session ends failed by the timeout, the refusal listed.
func TestReplayAnswerRefusedEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("real peers")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	endpoint, tapePath, stop := httpRecorder(t, peertest.EverythingHTTP(t, ctx).URL)
	client := mcp.NewClient(&mcp.Implementation{Name: "replay-test", Version: "1"}, elicitOpts)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	call(t, ctx, cs, "trigger-sampling-request", map[string]any{"prompt": "hi", "maxTokens": 5})
	cs.Close()
	stop()

	h, recs := tapetest.Read(t, tapePath)
	answers := 0
	for _, rec := range recs {
		if rec.Type != tape.TypeMessage || rec.Dir != tape.ClientToServer {
			continue
		}
		if info := jsonrpc.Classify(rec.Frame); info.Kind == jsonrpc.KindResponse {
			rec.Frame = []byte(`{"jsonrpc":"2.0","id":` + string(info.ID.Raw) + `,"result":"not an object"}`)
			answers++
		}
	}
	if answers != 1 {
		t.Fatalf("%d client answers recorded, want the sampling's", answers)
	}
	edited := tapetest.Write(t, filepath.Join(t.TempDir(), "edited.jsonl.zst"), h, recs)

	rep, err := Run(ctx, loadTape(t, edited), httpDial(peertest.EverythingHTTP(t, ctx).URL), WithMaxSpeed(), WithTimeout(3*time.Second), WithSettle(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	var s *SessionReport
	for _, sr := range rep.Sessions {
		if sr.Steps > 2 {
			s = sr
		}
	}
	if s == nil || s.Refused != 1 || s.Sent != s.Steps || !strings.Contains(s.Error, "no answer to tools/call trigger-sampling-request") ||
		!strings.Contains(text.String(), "refused: step 4 (answer to server request 0): the live server refused it with HTTP 400 Bad Request") {
		t.Fatalf("want the answer refused with HTTP 400, every step sent, then no answer to the tool call:\n%s", text.String())
	}
}
