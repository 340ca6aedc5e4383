package replay

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
	"github.com/mcptape/mcptape/transport"
)

// TestReplayHTTPBatchAsBatch checks that a batch recorded over HTTP, which
// the recorder writes as one record per member of its POST, is re-sent as
// one batch, as a batch recorded over stdio is; a POST of one message
// stays one message, and WebSocket messages (one exchange for the whole
// connection) are never joined.
func TestReplayHTTPBatchAsBatch(t *testing.T) {
	const (
		call   = `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo"}}`
		ping   = `{"jsonrpc":"2.0","id":7,"method":"ping"}`
		notif  = `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`
		answer = `{"jsonrpc":"2.0","id":"a","result":{}}`
		pong   = `{"jsonrpc":"2.0","id":7,"result":{}}`
	)
	type rec struct {
		dir      string
		exchange uint64
		frame    string // "" for the recorder's note of a cut frame
	}
	write := func(t *testing.T, stream string, recs []rec) string {
		var buf bytes.Buffer
		w := newTapeBuffer(t, &buf)
		for i, r := range recs {
			if r.frame == "" {
				w.Write(&tape.Record{Type: tape.TypeEvent, Event: tape.EventError, Time: int64(i/2+1) * 1000, Session: "s", Dir: tape.Direction(r.dir), Exchange: r.exchange, Stream: stream,
					Data: []byte(`{"error":"message recorded cut","size":9,"kept":9}`)})
				continue
			}
			w.Write(&tape.Record{Type: tape.TypeMessage, Time: int64(i/2+1) * 1000, Session: "s", Dir: tape.Direction(r.dir), Exchange: r.exchange, Stream: stream, Frame: []byte(r.frame)})
		}
		return writeTapeFile(t, w, &buf)
	}
	batch := []rec{{"c2s", 2, call}, {"c2s", 2, ping}, {"c2s", 2, notif}, {"s2c", 2, answer}, {"s2c", 2, pong}}
	tests := []struct {
		name     string
		stream   string
		recs     []rec
		streamed bool
		want     []string // the frames sent
	}{
		{"post batch", "post", batch, false, []string{"[" + call + "," + ping + "," + notif + "]"}},
		{"post batch streamed", "post", batch, true, []string{"[" + call + "," + ping + "," + notif + "]"}},
		{"post batch with a cut note streamed", "post", []rec{{"c2s", 2, call}, {"c2s", 2, ""}, {"c2s", 2, ping}, {"c2s", 2, notif}, {"s2c", 2, answer}, {"s2c", 2, pong}}, true,
			[]string{"[" + call + "," + ping + "," + notif + "]"}},
		{"posts of one message", "post", []rec{{"c2s", 2, call}, {"s2c", 2, answer}, {"c2s", 3, ping}, {"s2c", 3, pong}}, false, []string{call, ping}},
		{"websocket", "ws", []rec{{"c2s", 1, call}, {"c2s", 1, ping}, {"s2c", 1, answer}, {"s2c", 1, pong}}, false, []string{call, ping}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := write(t, tc.stream, tc.recs)
			var sessions []*Session
			if tc.streamed {
				sessions = openStreamed(t, path)
			} else {
				sessions = loadTape(t, path)
			}
			conn := newFakeConn(func(frame []byte) []string {
				if jsonrpc.Classify(frame).Kind == jsonrpc.KindBatch {
					return []string{`[{"jsonrpc":"2.0","id":"mcptape-1","result":{}},{"jsonrpc":"2.0","id":2,"result":{}}]`}
				}
				info := jsonrpc.Classify(frame)
				return []string{`{"jsonrpc":"2.0","id":` + string(info.ID.Raw) + `,"result":{}}`}
			})
			rep, err := Run(context.Background(), sessions, func(context.Context, *Session) (transport.Conn, error) { return conn, nil }, WithMaxSpeed())
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			rep.WriteText(&text)
			conn.mu.Lock()
			defer conn.mu.Unlock()
			var want []string
			for _, f := range tc.want {
				want = append(want, strings.ReplaceAll(strings.ReplaceAll(f, `"id":"a"`, `"id":"mcptape-1"`), `"id":7`, `"id":2`))
			}
			if strings.Join(conn.sent, "\n") != strings.Join(want, "\n") {
				t.Errorf("sent:\n%s\nwant:\n%s\nreport:\n%s", strings.Join(conn.sent, "\n"), strings.Join(want, "\n"), text.String())
			}
			if rep.ExitCode() != 0 {
				t.Errorf("exit %d:\n%s", rep.ExitCode(), text.String())
			}
		})
	}
}
