package replay

import (
	"bytes"
	"context"
	"slices"
	"testing"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
	"github.com/mcptape/mcptape/transport"
)

// TestReplayLastLineWithoutNewline: a stdio client line recorded without
// its "\n" (tape.Record.NoEOL: the client's input ended there) is sent
// with transport.SendOptions.NoEOL, so the server sees it as the recorded
// one did; of a batch line, only the frame that ends the line (the whole
// batch, or its last member when unbatched). Other lines keep their "\n".
func TestReplayLastLineWithoutNewline(t *testing.T) {
	const (
		ping  = `{"jsonrpc":"2.0","id":1,"method":"ping"}`
		pong  = `{"jsonrpc":"2.0","id":1,"result":{}}`
		last  = `{"jsonrpc":"2.0","id":7,"method":"x"}`
		batch = `[{"jsonrpc":"2.0","id":8,"method":"x"},{"jsonrpc":"2.0","method":"notifications/y"}]`
	)
	tests := []struct {
		name    string
		last    string
		noEOL   bool
		unbatch bool
		want    []bool // NoEOL of each frame sent
	}{
		{"last line without newline", last, true, false, []bool{false, true}},
		{"last line with newline", last, false, false, []bool{false, false}},
		{"batch line without newline", batch, true, false, []bool{false, true}},
		{"batch line without newline, unbatched", batch, true, true, []bool{false, false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := newTapeBuffer(t, &buf)
			for i, r := range []tape.Record{
				{Dir: tape.ClientToServer, Frame: []byte(ping)},
				{Dir: tape.ServerToClient, Frame: []byte(pong)},
				{Dir: tape.ClientToServer, Frame: []byte(tt.last), NoEOL: tt.noEOL},
			} {
				r.Type, r.Time, r.Session = tape.TypeMessage, int64(i+1)*1000, "s"
				w.Write(&r)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			conn := newFakeConn(func(frame []byte) []string {
				if info := jsonrpc.Classify(frame); info.Method == "ping" {
					return []string{`{"jsonrpc":"2.0","id":` + string(info.ID.Raw) + `,"result":{}}`}
				}
				return nil
			})
			opts := []Option{WithMaxSpeed()}
			if tt.unbatch {
				opts = append(opts, WithUnbatch())
			}
			dial := func(context.Context, *Session) (transport.Conn, error) { return conn, nil }
			if _, err := Run(context.Background(), loadBytes(t, buf.Bytes()), dial, opts...); err != nil {
				t.Fatal(err)
			}
			conn.mu.Lock()
			defer conn.mu.Unlock()
			if !slices.Equal(conn.noEOL, tt.want) {
				t.Errorf("NoEOL of the frames sent %v, want %v (frames %q)", conn.noEOL, tt.want, conn.sent)
			}
		})
	}
}
