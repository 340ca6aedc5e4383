package replay

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/transport"
)

// TestReplayCancelledStreamNotUnfinished: a recorded streamed answer that
// stops without its end part because the client cancelled its request
// (notifications/cancelled, as the reference server's chat stream stops)
// is not unfinished: the replay against a server that stops likewise
// exits 0. Without the cancel, the same cut stream is unfinished (exit 1).
func TestReplayCancelledStreamNotUnfinished(t *testing.T) {
	const c2s, s2c = "c2s", "s2c"
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chat","arguments":{"query":"q"}}}`
	start := `{"jsonrpc":"2.0","id":1,"result":{"type":"content_start"}}`
	delta := `{"jsonrpc":"2.0","id":1,"result":{"type":"content_delta","delta":"a"}}`
	cancel := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"user"}}`
	ping, pong := `{"jsonrpc":"2.0","id":2,"method":"ping"}`, `{"jsonrpc":"2.0","id":2,"result":{}}`
	for _, tc := range []struct {
		name string
		msgs [][2]string
		exit int
	}{
		{"cancelled", [][2]string{{c2s, call}, {s2c, start}, {s2c, delta}, {c2s, cancel}, {s2c, delta}, {c2s, ping}, {s2c, pong}}, 0},
		{"cut without a cancel", [][2]string{{c2s, call}, {s2c, start}, {s2c, delta}, {c2s, ping}, {s2c, pong}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sessions := writeTape(t, tc.msgs)
			// The live server streams two parts of the chat, never its end.
			conn := newFakeConn(func(frame []byte) []string {
				info := jsonrpc.Classify(frame)
				if info.Kind != jsonrpc.KindRequest {
					return nil
				}
				if info.Method == "ping" {
					return []string{fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, info.ID.Raw)}
				}
				return []string{
					fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"type":"content_start"}}`, info.ID.Raw),
					fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"type":"content_delta","delta":"a"}}`, info.ID.Raw),
				}
			})
			rep, err := Run(context.Background(), sessions, func(context.Context, *Session) (transport.Conn, error) { return conn, nil },
				WithMaxSpeed(), WithTimeout(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			rep.WriteText(&text)
			if rep.ExitCode() != tc.exit {
				t.Errorf("exit %d, want %d:\n%s", rep.ExitCode(), tc.exit, text.String())
			}
		})
	}
}
