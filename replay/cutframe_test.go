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

// TestReplayNotesCutClientFrames checks that a client frame the recorder
// kept only the start of (its "error" event with "kept" comes after the
// message over stdio, before it over HTTP) is counted, and the report
// says that it was re-sent cut; a server frame cut or another error is
// not counted.
func TestReplayNotesCutClientFrames(t *testing.T) {
	const (
		cut     = `{"jsonrpc":"2.0","id":1,"method":"big","params":"xxxx`
		ping    = `{"jsonrpc":"2.0","id":2,"method":"ping"}`
		pong    = `{"jsonrpc":"2.0","id":2,"result":{}}`
		cutNote = `{"error":"frame truncated in the tape (forwarded whole)","size":3000051,"kept":1048576}`
	)
	msg := func(dir tape.Direction, frame string) tape.Record {
		return tape.Record{Type: tape.TypeMessage, Dir: dir, Frame: []byte(frame)}
	}
	note := func(dir tape.Direction, data string) tape.Record {
		return tape.Record{Type: tape.TypeEvent, Event: tape.EventError, Dir: dir, Data: []byte(data)}
	}
	tests := []struct {
		name string
		recs []tape.Record
		want int
	}{
		{"stdio: note after the frame", []tape.Record{msg(tape.ClientToServer, cut), note(tape.ClientToServer, cutNote), msg(tape.ClientToServer, ping), msg(tape.ServerToClient, pong)}, 1},
		{"http: note before the frame", []tape.Record{note(tape.ClientToServer, cutNote), msg(tape.ClientToServer, cut), msg(tape.ClientToServer, ping), msg(tape.ServerToClient, pong)}, 1},
		{"server frame cut", []tape.Record{msg(tape.ClientToServer, ping), note(tape.ServerToClient, cutNote), msg(tape.ServerToClient, pong)}, 0},
		{"another error", []tape.Record{msg(tape.ClientToServer, ping), note(tape.ClientToServer, `{"error":"invalid JSON-RPC frame (forwarded as is)"}`), msg(tape.ServerToClient, pong)}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := newTapeBuffer(t, &buf)
			for i, r := range tc.recs {
				r.Time, r.Session = int64(i+1)*1000, "s"
				w.Write(&r)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			sessions := loadBytes(t, buf.Bytes())
			if got := sessions[0].CutFrames; got != tc.want {
				t.Fatalf("CutFrames = %d, want %d", got, tc.want)
			}
			conn := newFakeConn(func(frame []byte) []string {
				if info := jsonrpc.Classify(frame); info.Method == "ping" {
					return []string{`{"jsonrpc":"2.0","id":` + string(info.ID.Raw) + `,"result":{}}`}
				}
				return nil
			})
			rep, err := Run(context.Background(), sessions, func(context.Context, *Session) (transport.Conn, error) { return conn, nil }, WithMaxSpeed())
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			rep.WriteText(&text)
			if noted := strings.Contains(text.String(), "1 client frame recorded cut"); noted != (tc.want > 0) {
				t.Errorf("note of the cut frame: %v, want %v:\n%s", noted, tc.want > 0, text.String())
			}
		})
	}
}
