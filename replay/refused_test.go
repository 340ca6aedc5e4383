package replay

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// TestReplayRefusedAsRecorded replays over HTTP a tape whose server
// refused POSTs (a batch with requests, one of notifications only) with an
// HTTP error status: the live server
// refusing it with the same status is what was recorded (exit 0, the
// error in its body compared as the recorded one), another status still
// fails the replay.
func TestReplayRefusedAsRecorded(t *testing.T) {
	const (
		init1   = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
		initRes = `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-03-26","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`
		call    = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`
		ping    = `{"jsonrpc":"2.0","id":3,"method":"ping"}`
		refusal = `{"jsonrpc":"2.0","error":{"code":-32700,"message":"batches refused"},"id":null}`
		ping2   = `{"jsonrpc":"2.0","id":4,"method":"ping"}`
		pong2   = `{"jsonrpc":"2.0","id":4,"result":{}}`
	)
	h := newHandTape(t)
	msg := h.msg
	status := func(x uint64, code int) { h.status(x, code, "application/json") }
	msg(tape.ClientToServer, 1, init1)
	status(1, 200)
	msg(tape.ServerToClient, 1, initRes)
	msg(tape.ClientToServer, 2, call)
	msg(tape.ClientToServer, 2, ping)
	status(2, 400)
	msg(tape.ServerToClient, 2, refusal)
	msg(tape.ClientToServer, 3, ping2)
	status(3, 200)
	msg(tape.ServerToClient, 3, pong2)
	// A batch of notifications only, refused too.
	msg(tape.ClientToServer, 4, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	msg(tape.ClientToServer, 4, `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)
	status(4, 400)
	msg(tape.ServerToClient, 4, refusal)
	path := h.file()
	tests := []struct {
		name   string
		status int // the live refusal of a batch
		exit   int
		text   string
	}{
		{"same status", 400, 0, "HTTP 400, as recorded"},
		{"another status", 403, 2, "403 Forbidden"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				w.Header().Set("Content-Type", "application/json")
				switch {
				case r.Method != http.MethodPost:
					w.WriteHeader(http.StatusMethodNotAllowed)
				case bytes.HasPrefix(body, []byte("[")):
					w.WriteHeader(tc.status)
					io.WriteString(w, refusal)
				case bytes.Contains(body, []byte(`"initialize"`)):
					io.WriteString(w, initRes)
				case bytes.Contains(body, []byte(`"method":"ping"`)):
					io.WriteString(w, strings.Replace(pong2, `"id":4`, `"id":`+string(jsonrpc.Classify(body).ID.Raw), 1))
				default:
					w.WriteHeader(http.StatusAccepted)
				}
			}))
			t.Cleanup(srv.Close)
			rep, err := Run(context.Background(), loadTape(t, path), httpDial(srv.URL+"/mcp"), WithMaxSpeed())
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			rep.WriteText(&text)
			if rep.ExitCode() != tc.exit || !strings.Contains(text.String(), tc.text) {
				t.Fatalf("exit %d, want %d and %q in:\n%s", rep.ExitCode(), tc.exit, tc.text, text.String())
			}
			if sr := rep.Sessions[0]; tc.exit == 0 && (sr.Sent != 6 || sr.Matched != 4) {
				t.Errorf("sent %d, matched %d; want 6 and 4 (the refusals' errors too):\n%s", sr.Sent, sr.Matched, text.String())
			}
		})
	}
}
