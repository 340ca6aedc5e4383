package replay

import (
	"context"
	"testing"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/transport"
)

// TestReplayInitializeCounted: the answer to initialize counts like any
// other (matched or differed), also when one side is an error: a live
// initialize refused where the recorded one succeeded was left out of
// the counts (0 matched, 0 differed). The exit code says the run did not
// match: 2 when the live one failed (the session cannot go on), 1 when
// the recorded one did.
func TestReplayInitializeCounted(t *testing.T) {
	const refused = `"error":{"code":-32602,"message":"Unsupported protocol version"}`
	answer := func(ok bool, id string) string {
		if ok {
			return initAnswer(id)
		}
		return `{"jsonrpc":"2.0","id":` + id + `,` + refused + `}`
	}
	tests := []struct {
		name                    string
		recorded, live          bool // initialize succeeded
		matched, differed, exit int
		failed                  bool
	}{
		{"both succeeded", true, true, 2, 0, 0, false},
		{"live refused", true, false, 0, 1, 2, true},
		{"recorded refused", false, true, 1, 1, 1, false},
		{"both refused", false, false, 2, 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sessions := writeTape(t, [][2]string{
				{"c2s", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`},
				{"s2c", answer(tt.recorded, "1")},
				{"c2s", `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
				{"c2s", `{"jsonrpc":"2.0","id":2,"method":"ping"}`},
				{"s2c", `{"jsonrpc":"2.0","id":2,"result":{}}`},
			})
			dial := func(context.Context, *Session) (transport.Conn, error) {
				return newFakeConn(func(frame []byte) []string {
					info := jsonrpc.Classify(frame)
					switch {
					case info.Kind != jsonrpc.KindRequest:
						return nil
					case info.Method == "initialize":
						return []string{answer(tt.live, string(info.ID.Raw))}
					}
					return []string{`{"jsonrpc":"2.0","id":` + string(info.ID.Raw) + `,"result":{}}`}
				}), nil
			}
			rep, err := Run(context.Background(), sessions, dial, WithMaxSpeed(), WithTimeout(5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			sr := rep.Sessions[0]
			if sr.Differed != tt.differed || (!tt.failed && sr.Matched != tt.matched) || rep.ExitCode() != tt.exit || (sr.Error != "") != tt.failed {
				t.Errorf("matched %d, differed %d, exit %d, error %q; want %d, %d, %d, failed %v",
					sr.Matched, sr.Differed, rep.ExitCode(), sr.Error, tt.matched, tt.differed, tt.exit, tt.failed)
			}
			if tt.differed > 0 && (len(sr.Differences) == 0 || sr.Differences[0].Method != "initialize") {
				t.Errorf("differences %+v: want initialize's", sr.Differences)
			}
		})
	}
}
