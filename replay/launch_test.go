package replay

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/transport"
)

// TestReplayCancelAfterCallWritten replays over Streamable HTTP a call and
// its notifications/cancelled, recorded 1 ms apart, at full speed, with
// the call's POST held 300 ms on its way out: the cancel, POSTed on
// another connection, must wait until the call's POST has been written,
// so that it cannot reach the server before the call (which would then
// never see a cancel for a call it knows, and answer in full). Against a
// server sending the call's headers at once, the server reads the call
// first (the cancel leaves once the headers came); against one holding
// them back, the cancel leaves transport.LandGrace after the call's
// write. A call not written within the timeout does not hold the cancel,
// nor the replay, for longer: a note says so. (Before, the cancel left
// 20 ms after it was due, 280 ms before the call.)
func TestReplayCancelAfterCallWritten(t *testing.T) {
	const c2s, s2c = "c2s", "s2c"
	sessions := func(t *testing.T) []*Session {
		return writeTape(t, [][2]string{
			{c2s, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`},
			{s2c, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"order","version":"1"}}}`},
			{c2s, `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
			{c2s, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}`},
			{c2s, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"user"}}`},
		})
	}
	tests := []struct {
		name      string
		heldHeads bool
		hold      time.Duration // the call's POST held on its way out
		timeout   time.Duration
		late      bool // the call is not written within the timeout
	}{
		{"headers at once", false, 300 * time.Millisecond, 10 * time.Second, false},
		{"headers held", true, 300 * time.Millisecond, 10 * time.Second, false},
		{"not written in time", false, time.Minute, 300 * time.Millisecond, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &peertest.CancelOrder{HeldHeads: tt.heldHeads}
			ts := httptest.NewServer(srv)
			t.Cleanup(ts.Close)
			held := &peertest.HeldCalls{Hold: tt.hold}
			dial := heldDial(t, ts.URL+"/mcp", held)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			rep, err := Run(ctx, sessions(t), dial, WithMaxSpeed(), WithTimeout(tt.timeout), WithSettle(50*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			rep.WriteText(&text)
			s := rep.Sessions[0]
			if s.Error != "" || s.Sent != 4 {
				t.Fatalf("error %q, %d steps sent, want 4:\n%s", s.Error, s.Sent, text.String())
			}
			noted := slices.ContainsFunc(s.Notes, func(n string) bool { return strings.Contains(n, "was not written within") })
			if tt.late {
				if writing, _, cn := held.Times(); !noted || cn.IsZero() || !writing.IsZero() {
					t.Errorf("call written at %v, cancel at %v, want the cancel alone and a note:\n%s", writing, cn, text.String())
				}
				return
			}
			if noted {
				t.Errorf("noted a call not written in time:\n%s", text.String())
			}
			// With the headers held, only the grace after the write lets
			// the cancel go (the answer's headers let it go at once, maybe
			// before this dialer noted the end of the write).
			var grace time.Duration
			if tt.heldHeads {
				grace = transport.LandGrace
			}
			if err := held.CancelAfterWrite(grace); err != nil {
				t.Fatalf("%v:\n%s", err, text.String())
			}
			callFirst, err := srv.Order()
			if err != nil {
				t.Fatal(err)
			}
			if !tt.heldHeads && !callFirst {
				t.Error("the server read the cancel before its call")
			}
		})
	}
}

// heldDial dials endpoint over connections of held (HeldCalls: the
// writes of a tools/call held).
func heldDial(t *testing.T, endpoint string, held *peertest.HeldCalls) DialFunc {
	tr := &http.Transport{DialContext: held.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return func(ctx context.Context, s *Session) (transport.Conn, error) {
		return transport.DialHTTP(ctx, endpoint, append(HTTPOptions(s), transport.WithHTTPClient(&http.Client{Transport: tr}))...)
	}
}
