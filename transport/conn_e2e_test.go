package transport

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
)

// End-to-end helpers: MCP conversations with real peers (internal/peertest)
// through a Conn, written frame by frame as a replayer would send them.

// e2eTimeout bounds one end-to-end test.
const e2eTimeout = 45 * time.Second

func e2eContext(t *testing.T) context.Context {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test against a real peer (-short)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), e2eTimeout)
	t.Cleanup(cancel)
	return ctx
}

// exchange sends frame and returns the answer to the request id idRaw,
// with the other frames that arrived before it.
func exchange(t *testing.T, ctx context.Context, c Conn, frame, idRaw string) (Incoming, []Incoming, *Exchange) {
	t.Helper()
	ex, err := c.Send(ctx, []byte(frame), SendOptions{})
	if err != nil {
		t.Fatalf("Send(%.100s): %v", frame, err)
	}
	var others []Incoming
	for {
		rctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		in, err := c.Recv(rctx)
		cancel()
		if err != nil {
			t.Fatalf("waiting for the answer to %s: %v (other frames: %d)", idRaw, err, len(others))
		}
		info := jsonrpc.Classify(in.Frame)
		if (info.Kind == jsonrpc.KindResponse || info.Kind == jsonrpc.KindError) && string(info.ID.Raw) == idRaw {
			return in, others, ex
		}
		others = append(others, in)
	}
}

// resultOf decodes an answer's result, failing on an error answer.
func resultOf(t *testing.T, in Incoming) map[string]any {
	t.Helper()
	var m struct {
		Result map[string]any  `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(in.Frame, &m); err != nil || m.Error != nil || m.Result == nil {
		t.Fatalf("answer %.300s: not a result (%v)", in.Frame, err)
	}
	return m.Result
}

// handshake runs initialize (asking for version) and
// notifications/initialized, and returns the initialize result.
func handshake(t *testing.T, ctx context.Context, c Conn, version string) map[string]any {
	t.Helper()
	frame := fmt.Sprintf(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"mcptape-transport-test","version":"0"}}}`, version)
	in, _, _ := exchange(t, ctx, c, frame, "0")
	res := resultOf(t, in)
	if res["protocolVersion"] != version {
		t.Fatalf("server answered protocol %v, asked %s", res["protocolVersion"], version)
	}
	if _, err := c.Send(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), SendOptions{}); err != nil {
		t.Fatalf("notifications/initialized: %v", err)
	}
	return res
}

// listAndCall checks tools/list holds tool and that calling it with args
// answers a text containing want.
func listAndCall(t *testing.T, ctx context.Context, c Conn, tool, args, want string) {
	t.Helper()
	in, _, _ := exchange(t, ctx, c, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "1")
	if !strings.Contains(string(in.Frame), `"name":"`+tool+`"`) {
		t.Fatalf("tools/list lacks %s: %.300s", tool, in.Frame)
	}
	in, _, _ = exchange(t, ctx, c, fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, tool, args), "2")
	res := resultOf(t, in)
	if b, _ := json.Marshal(res["content"]); !strings.Contains(string(b), want) {
		t.Fatalf("tools/call %s answered %.300s, want %q in it", tool, in.Frame, want)
	}
}

// toJSON returns v as JSON text, for looking into decoded results.
func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
