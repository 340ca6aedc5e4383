package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/transport"
)

// TestReplayRecordedWithoutAnswer: requests the recording holds no answer
// to (the server broke off, the recorder stopped) are sent, and whether
// the live server answers them is reported on its own, in text and JSON,
// never as a difference: a quick live answer is not extra, a late one is
// waited for (up to the settle margin) rather than missed, and one that
// never comes is named. A request the recording cancels is left out.
func TestReplayRecordedWithoutAnswer(t *testing.T) {
	data := tapeBytes(t, [][2]string{
		{"c2s", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`},
		{"s2c", initAnswer("1")},
		{"c2s", `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{"c2s", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"quick"}}`},
		{"c2s", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"late"}}`},
		{"c2s", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"never"}}`},
		{"c2s", `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"fails"}}`},
		{"c2s", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"given-up"}}`},
		{"c2s", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":6}}`},
		{"c2s", `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`},
		{"s2c", `{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}`},
	})
	path := filepath.Join(t.TempDir(), "t.jsonl.zst")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	dial := func(ctx context.Context, _ *Session) (transport.Conn, error) {
		var c *fakeConn
		c = newFakeConn(mcpServer(func(frame []byte, _ *jsonrpc.Info, id string) []string {
			name := paramsName(frame)
			switch name {
			case "late":
				go func() {
					time.Sleep(300 * time.Millisecond)
					select {
					case c.in <- transport.Incoming{Frame: []byte(`{"jsonrpc":"2.0","id":` + id + `,"result":{}}`), Time: time.Now()}:
					case <-c.done:
					}
				}()
				return nil
			case "never":
				return nil
			case "fails":
				return []string{`{"jsonrpc":"2.0","id":` + id + `,"error":{"code":-32603,"message":"boom"}}`}
			case "":
				return []string{`{"jsonrpc":"2.0","id":` + id + `,"result":{"tools":[]}}`}
			}
			return []string{`{"jsonrpc":"2.0","id":` + id + `,"result":{}}`}
		}))
		return c, nil
	}
	for _, tc := range []struct {
		name     string
		sessions []*Session
	}{{"in memory", loadBytes(t, data)}, {"streamed", openStreamed(t, path)}} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Run(context.Background(), tc.sessions, dial, WithMaxSpeed(), WithTimeout(5*time.Second), WithSettle(time.Second))
			if err != nil {
				t.Fatal(err)
			}
			var text, js bytes.Buffer
			if err := rep.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if err := rep.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			if rep.ExitCode() != 0 {
				t.Fatalf("exit %d, want 0 (not a difference):\n%s", rep.ExitCode(), text.String())
			}
			var got struct {
				Sessions []struct {
					Extra      int `json:"extra"`
					Missing    int `json:"missing"`
					Unanswered struct {
						Requests        int      `json:"requests"`
						AnsweredLive    int      `json:"answered_live"`
						NotAnsweredLive int      `json:"not_answered_live"`
						Answered        []string `json:"answered"`
						NotAnswered     []string `json:"not_answered"`
					} `json:"recorded_unanswered"`
				} `json:"sessions"`
			}
			if err := json.Unmarshal(js.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			u := got.Sessions[0].Unanswered
			wantAnswered := []string{"tools/call quick, recorded id 2", "tools/call late, recorded id 3", "tools/call fails, recorded id 5 (error -32603)"}
			if u.Requests != 4 || u.AnsweredLive != 3 || u.NotAnsweredLive != 1 || !reflect.DeepEqual(u.Answered, wantAnswered) ||
				!reflect.DeepEqual(u.NotAnswered, []string{"tools/call never, recorded id 4"}) || got.Sessions[0].Extra != 0 {
				t.Errorf("JSON report:\n%s", js.String())
			}
			for _, want := range []string{
				"\n  4 requests recorded without an answer: 3 answered live, 1 not\n",
				"\n    answered live: tools/call late, recorded id 3\n",
				"\n    not answered live: tools/call never, recorded id 4\n",
			} {
				if !strings.Contains(text.String(), want) {
					t.Errorf("text report lacks %q:\n%s", want, text.String())
				}
			}
		})
	}
}
