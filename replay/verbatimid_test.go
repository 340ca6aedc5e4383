package replay

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/transport"
)

// TestReplayVerbatimIDs: ids that replay sends as recorded (fractions,
// objects) stay so whatever integer id of the same value got a fresh one
// (1.0 after 1, 1 after 1.0: the integer gets a fresh id, the fraction
// is sent as 1.0), and an object id the server echoes back with other
// spacing pairs with its recorded answer (no extra, no missing).
func TestReplayVerbatimIDs(t *testing.T) {
	req := func(id string) [2]string {
		return [2]string{"c2s", `{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`}
	}
	resp := func(id string) [2]string { return [2]string{"s2c", `{"jsonrpc":"2.0","id":` + id + `,"result":{}}`} }
	tests := []struct {
		name string
		ids  []string // recorded, each answered before the next
		want string   // the live ids sent
	}{
		{"fraction after the integer", []string{`"x"`, `1`, `1.0`}, `"mcptape-1" 2 1.0`},
		{"integer after the fraction", []string{`"x"`, `1.0`, `1`}, `"mcptape-1" 1.0 2`},
		{"object echoed with other spacing", []string{`{"a":1}`}, `{"a":1}`},
		{"object used again", []string{`{"a":1}`, `{"a":1}`}, `{"a":1} {"a":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var msgs [][2]string
			for _, id := range tt.ids {
				msgs = append(msgs, req(id), resp(id))
			}
			conn := newFakeConn(func(frame []byte) []string {
				info := jsonrpc.Classify(frame)
				if info.Kind != jsonrpc.KindRequest {
					return nil
				}
				id := string(info.ID.Raw)
				if strings.HasPrefix(id, "{") { // a server that re-encodes it
					id = strings.ReplaceAll(id, ":", ": ")
				}
				return []string{`{"jsonrpc":"2.0","id":` + id + `,"result":{}}`}
			})
			rep, err := Run(context.Background(), writeTape(t, msgs), func(context.Context, *Session) (transport.Conn, error) { return conn, nil }, WithMaxSpeed())
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			rep.WriteText(&text)
			if s := rep.Sessions[0]; s.Matched != len(tt.ids) || s.Extra != 0 || s.Missing != 0 || rep.ExitCode() != 0 {
				t.Errorf("matched %d, extra %d, missing %d, want %d, 0, 0:\n%s", s.Matched, s.Extra, s.Missing, len(tt.ids), text.String())
			}
			var ids []string
			for _, f := range conn.sent {
				ids = append(ids, jsonrpc.Classify([]byte(f)).ID.String())
			}
			if got := strings.Join(ids, " "); got != tt.want {
				t.Errorf("live ids %s, want %s", got, tt.want)
			}
		})
	}
}
