package replay

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/transport"
)

// TestReplayVerbatimIDs: ids are one id by value (jsonrpc.ID.Key), as
// inspect and mock take them: an integer spelled 1.0 or 1e0 after 1 (or
// 1 after 1.0) is the recorded id used again, sent under the live id of
// its first use, spelled as recorded (2, 2.0, 2e0); it was sent as 1.0,
// apart from 1's live id. A true fraction (1.5) and an object are sent as
// recorded; an object id the server echoes back with other spacing pairs
// with its recorded answer (no extra, no missing).
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
		{"fraction after the integer", []string{`"x"`, `1`, `1.0`}, `"mcptape-1" 2 2.0`},
		{"integer after the fraction", []string{`"x"`, `1.0`, `1`}, `"mcptape-1" 2.0 2`},
		{"exponent after the integer", []string{`"x"`, `5`, `5e0`, `50e-1`}, `"mcptape-1" 2 2e0 2e0`},
		{"true fraction", []string{`"x"`, `1.5`}, `"mcptape-1" 1.5`},
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

// TestReplayFreshIDsIntegerValues: an integer id spelled with a fraction
// gets a fresh id of its own value, so no two live ids in flight key
// alike. Recorded 5 and 1.0 are both in flight: sent as 1 and 2.0, each
// answer pairs with its request. Held in memory and streamed.
func TestReplayFreshIDsIntegerValues(t *testing.T) {
	req := func(id, n string) [2]string {
		return [2]string{"c2s", `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"n` + n + `"}}`}
	}
	resp := func(id, n string) [2]string {
		return [2]string{"s2c", `{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"n` + n + `"}]}}`}
	}
	data := tapeBytes(t, [][2]string{req(`5`, "5"), req(`1.0`, "1"), resp(`1.0`, "1"), resp(`5`, "5")})
	path := filepath.Join(t.TempDir(), "t.jsonl.zst")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, memory := range []int64{-1, 0} {
		tp, err := Open(path, memory)
		if err != nil {
			t.Fatal(err)
		}
		// The server answers both when both have come, the last first,
		// each with its request's id and name.
		var held []string
		conn := newFakeConn(func(frame []byte) []string {
			info := jsonrpc.Classify(frame)
			if info.Kind != jsonrpc.KindRequest {
				return nil
			}
			name := paramsName(frame)
			held = append([]string{`{"jsonrpc":"2.0","id":` + string(info.ID.Raw) + `,"result":{"content":[{"type":"text","text":"` + name + `"}]}}`}, held...)
			if len(held) < 2 {
				return nil
			}
			return held
		})
		rep, err := Run(context.Background(), tp.Sessions, func(context.Context, *Session) (transport.Conn, error) { return conn, nil }, WithMaxSpeed(), WithTimeout(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		var text bytes.Buffer
		rep.WriteText(&text)
		if s := rep.Sessions[0]; s.Matched != 2 || s.Extra != 0 || s.Missing != 0 || rep.ExitCode() != 0 {
			t.Errorf("memory %d: matched %d, extra %d, missing %d, want 2, 0, 0:\n%s", memory, s.Matched, s.Extra, s.Missing, text.String())
		}
		var ids []string
		for _, f := range conn.sent {
			ids = append(ids, jsonrpc.Classify([]byte(f)).ID.String())
		}
		if got := strings.Join(ids, " "); got != "1 2.0" {
			t.Errorf("memory %d: live ids %s, want 1 2.0", memory, got)
		}
	}
}

// TestReplayForgetsVerbatimIDs: the ids a long replay sends as recorded
// (1.0, an object echoed re-encoded) are forgotten once answered, as fresh
// ones are: the id table holds what is recent, not the whole session.
func TestReplayForgetsVerbatimIDs(t *testing.T) {
	const n = 3 * pruneLag
	var msgs [][2]string
	for i := 1; i <= n; i++ {
		id := strconv.Itoa(i) + ".0"
		if i%2 == 0 {
			id = `{"a": ` + strconv.Itoa(i) + `}`
		}
		msgs = append(msgs, [2]string{"c2s", `{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`},
			[2]string{"s2c", `{"jsonrpc":"2.0","id":` + id + `,"result":{}}`})
	}
	sessions := writeTape(t, msgs)
	conn := newFakeConn(func(frame []byte) []string {
		info := jsonrpc.Classify(frame)
		return []string{`{"jsonrpc":"2.0","id":` + string(info.ID.Raw) + `,"result":{}}`}
	})
	o, err := newRunOptions([]Option{WithMaxSpeed()})
	if err != nil {
		t.Fatal(err)
	}
	cmp, err := newComparer(nil)
	if err != nil {
		t.Fatal(err)
	}
	r := newRunner(sessions[0], o, cmp, ownSpace)
	r.conn = conn
	r.run(context.Background())
	if r.rep.Matched != n {
		t.Fatalf("matched %d of %d", r.rep.Matched, n)
	}
	if len(r.ids.rec) > pruneLag+1 || len(r.ids.live) > pruneLag+1 {
		t.Errorf("id table holds %d live and %d recorded keys after %d answered requests, want at most %d", len(r.ids.rec), len(r.ids.live), n, pruneLag+1)
	}
}
