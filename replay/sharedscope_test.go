package replay

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/tape"
)

// TestReplaySharedScopeCancel: sessions replayed at once against a
// stateless server share its one scope (no Mcp-Session-Id), so a cancel
// must name only its own session's request. Session "a" cancels its slow
// chat call; session "b" makes the same recorded call and waits for its
// end. Replayed with --concurrency 2, b's call is in flight when a's
// cancel goes out: b must still get its whole answer.
func TestReplaySharedScopeCancel(t *testing.T) {
	const chunks, delay = 8, 40 * time.Millisecond
	chat := refserver.Chat{Chunks: chunks, Delay: delay}
	endpoint := refHTTP(t, refserver.HTTPConfig{Stateless: true, JSONResponse: true, Chat: chat}, refserver.WithChat(chat))
	for _, tc := range []struct {
		name   string
		idType string // the recorded ids: a number or a string
	}{
		{"number ids", "number"},
		{"string ids", "string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sessions := loadBytes(t, sharedScopeTape(t, tc.idType, chunks))
			if len(sessions) != 2 {
				t.Fatalf("%d sessions, want 2", len(sessions))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			rep, err := Run(ctx, sessions, httpDial(endpoint), WithConcurrency(2), WithTimeout(5*time.Second), WithSettle(200*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			rep.WriteText(&text)
			for _, s := range rep.Sessions {
				if s.Error != "" || s.Missing != 0 {
					t.Errorf("session %s: error %q, missing %d:\n%s", s.Session, s.Error, s.Missing, text.String())
				}
			}
		})
	}
}

// sharedScopeTape returns a stdio tape of two sessions started at the
// same time: each initializes and calls chat; "a" cancels its call after
// its first delta, "b" gets the whole stream of n deltas and its end.
func sharedScopeTape(t *testing.T, idType string, n int) []byte {
	t.Helper()
	id := func(i int) string {
		if idType == "string" {
			return fmt.Sprintf(`"req-%d"`, i)
		}
		return fmt.Sprint(i)
	}
	const ms = int64(time.Millisecond)
	var recs []*tape.Record
	put := func(at int64, sess string, dir tape.Direction, frame string) {
		recs = append(recs, &tape.Record{Type: tape.TypeMessage, Time: at, Session: sess, Dir: dir, Frame: []byte(frame)})
	}
	part := func(sess string, at int64, body string) {
		put(at, sess, tape.ServerToClient, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, id(2), body))
	}
	for _, sess := range []string{"a", "b"} {
		put(1*ms, sess, tape.ClientToServer, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, id(1)))
		put(2*ms, sess, tape.ServerToClient, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`, id(1)))
		put(3*ms, sess, tape.ClientToServer, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		put(4*ms, sess, tape.ClientToServer, fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"chat","arguments":{"query":"two words"}}}`, id(2)))
		part(sess, 5*ms, `{"type":"content_start"}`)
		part(sess, 45*ms, `{"type":"content_delta","delta":"x"}`)
		if sess == "a" {
			put(50*ms, sess, tape.ClientToServer, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%s,"reason":"user"}}`, id(2)))
			continue
		}
		for i := 1; i < n; i++ {
			part(sess, int64(45+40*i)*ms, `{"type":"content_delta","delta":"x"}`)
		}
		part(sess, int64(45+40*n)*ms, `{"type":"content_end","conversation_id":"c","usage":{}}`)
	}
	slices.SortStableFunc(recs, func(x, y *tape.Record) int { return cmp.Compare(x.Time, y.Time) })
	var buf bytes.Buffer
	w := newTapeBuffer(t, &buf)
	for _, rec := range recs {
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
