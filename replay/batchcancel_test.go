package replay

import (
	"bytes"
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
)

// A 2025-03-26 session with a server of the cancel tests (peertest's
// CancelOrder, streamOrder): its start, a call, its cancel and a ping.
var (
	cancelTapeStart = [][2]string{
		{"c2s", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`},
		{"s2c", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-03-26","capabilities":{"tools":{}},"serverInfo":{"name":"order","version":"1"}}}`},
		{"c2s", `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
	}
	cancelTapeCall   = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}`
	cancelTapeCancel = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"user"}}`
	cancelTapePing   = `{"jsonrpc":"2.0","id":3,"method":"ping"}`
)

// TestReplayCancelInBatch replays over Streamable HTTP a
// notifications/cancelled recorded in one batch (2025-03-26) with another
// request, at full speed, the call it names being held 300 ms on its way
// out. The cancel marks its call cancelled as a lone cancel does: the
// call's answer is not expected (a recorded one that crossed the cancel is
// not missing live) nor refused (a live one the recording lacks is not
// extra). A cancel naming a call of an earlier frame waits until that
// call's POST has landed (the server reads the call first); one naming a
// call of its own batch goes with it. (Before, a cancel sent with a
// request in its batch was neither marked nor waited for: the cancel
// overtook the call, and the answers were judged as if not cancelled.)
func TestReplayCancelInBatch(t *testing.T) {
	const c2s, s2c = "c2s", "s2c"
	call, cancel, ping := cancelTapeCall, cancelTapeCancel, cancelTapePing
	tests := []struct {
		name    string
		msgs    [][2]string
		earlier bool // the call is in an earlier frame than the cancel
	}{
		{"earlier call, its answer dropped", [][2]string{
			{c2s, call}, {c2s, "[" + ping + "," + cancel + "]"}, {s2c, `[{"jsonrpc":"2.0","id":3,"result":{}}]`},
		}, true},
		{"earlier call, its answer crossing the cancel", [][2]string{
			{c2s, call}, {c2s, "[" + ping + "," + cancel + "]"}, {s2c, `[{"jsonrpc":"2.0","id":3,"result":{}}]`},
			{s2c, `{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`},
		}, true},
		{"call and cancel in one batch, answer dropped", [][2]string{
			{c2s, "[" + call + "," + cancel + "," + ping + "]"}, {s2c, `[{"jsonrpc":"2.0","id":3,"result":{}}]`},
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &peertest.CancelOrder{}
			ts := httptest.NewServer(srv)
			t.Cleanup(ts.Close)
			held := &peertest.HeldCalls{Hold: 300 * time.Millisecond}
			text := replayCancelTape(t, tt.msgs, heldDial(t, ts.URL+"/mcp", held), 2*time.Second)
			if !tt.earlier {
				return
			}
			if err := held.CancelAfterWrite(0); err != nil {
				t.Fatalf("%v:\n%s", err, text)
			}
			if callFirst, err := srv.Order(); err != nil || !callFirst {
				t.Errorf("the server read the cancel before its call (%v):\n%s", err, text)
			}
		})
	}
}

// replayCancelTape replays cancelTapeStart then msgs at full speed with
// dial and timeout, fails t unless every step was sent and every answer
// matched, none missing or extra, and returns the report's text.
func replayCancelTape(t *testing.T, msgs [][2]string, dial DialFunc, timeout time.Duration) string {
	t.Helper()
	ctx, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	rep, err := Run(ctx, writeTape(t, append(cancelTapeStart[:len(cancelTapeStart):len(cancelTapeStart)], msgs...)), dial,
		WithMaxSpeed(), WithTimeout(timeout), WithSettle(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	s := rep.Sessions[0]
	if rep.ExitCode() != 0 || s.Sent != s.Steps || s.Missing != 0 || s.Extra != 0 {
		t.Fatalf("exit %d, %d of %d steps sent, %d missing, %d extra; want 0, all, none:\n%s",
			rep.ExitCode(), s.Sent, s.Steps, s.Missing, s.Extra, text.String())
	}
	return text.String()
}
