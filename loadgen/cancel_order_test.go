package loadgen

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/transport"
)

// TestCancelAfterCallWritten cancels a call over Streamable HTTP whose
// POST is held 400 ms on its way out, with a cancel delay of 300 ms: the
// cancellation, POSTed on another connection, must wait until the call's
// POST has been written, so that it cannot reach the server before the
// call (the server would never see a cancel for a call it knows, and
// answer in full). Against a server sending the call's headers at once
// the server reads the call first (the cancel leaves once the headers
// came); against one holding them back the cancel leaves
// transport.LandGrace after the call's write. The cancel delay still runs
// from the send, not from the write: the cancel follows the write by
// less than the delay. (Before, the cancel left 300 ms after the send,
// 100 ms before the call.) Over stdio and WebSocket, TestCancelStdio and
// the cmd tests (TestLoadCancelsStreamedChat, TestLoadWebSocket) cover
// the cancellation.
func TestCancelAfterCallWritten(t *testing.T) {
	const after, hold = 300 * time.Millisecond, 400 * time.Millisecond
	for _, held := range []bool{false, true} {
		t.Run(fmt.Sprintf("headers held %v", held), func(t *testing.T) {
			srv := &peertest.CancelOrder{HeldHeads: held}
			ts := httptest.NewServer(srv)
			t.Cleanup(ts.Close)
			slow := &peertest.HeldCalls{Hold: hold}
			tr := &http.Transport{DialContext: slow.DialContext}
			t.Cleanup(tr.CloseIdleConnections)
			rep, err := Run(context.Background(), Target{URL: ts.URL + "/mcp"}, mustCalls(t, `tools/call slow {}`),
				WithSessions(1), WithRequests(1), WithCancel(after, 1), WithTimeout(10*time.Second),
				WithHTTPClient(&http.Client{Transport: tr}))
			if err != nil {
				t.Fatal(err)
			}
			if c := rep.Cancel; c == nil || c.Sent != 1 || rep.ErrorTotal != 0 {
				t.Fatalf("cancel %+v errors %v", rep.Cancel, rep.Errors)
			}
			// With the headers held, only the grace after the write lets
			// the cancel go (the answer's headers let it go at once, maybe
			// before this dialer noted the end of the write).
			var grace time.Duration
			if held {
				grace = transport.LandGrace
			}
			if err := slow.CancelAfterWrite(grace); err != nil {
				t.Fatal(err)
			}
			if writing, _, cancel := slow.Times(); cancel.Sub(writing) >= after {
				t.Errorf("the cancel came %v after the call's write: the delay of %v ran from the write, not the send", cancel.Sub(writing), after)
			}
			callFirst, err := srv.Order()
			if err != nil {
				t.Fatal(err)
			}
			if !held && !callFirst {
				t.Error("the server read the cancel before its call")
			}
		})
	}
}
