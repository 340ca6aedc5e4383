package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// TestReplayAnswerRefused replays over HTTP a session whose server asked
// the client for a sampling during a tool call, against a live server
// whose HTTP layer refuses the client's answer (400, a JSON-RPC error in
// the body): the refusal is a problem of the report, text and JSON, the
// session differs (exit 1) and goes on (the tool's answer is compared).
// The same for the fallback answer to a server request the recording
// does not have; a refusal with the recorded status is recorded behaviour.
func TestReplayAnswerRefused(t *testing.T) {
	const (
		init1   = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"sampling":{}},"clientInfo":{"name":"c","version":"1"}}}`
		initRes = `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`
		call    = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sample"}}`
		sreq    = `{"jsonrpc":"2.0","id":0,"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}`
		sres    = `{"jsonrpc":"2.0","id":0,"result":{"role":"assistant","content":{"type":"text","text":"hi"},"model":"m"}}`
		callRes = `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"ok"}]}}`
		refusal = `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"no thanks"}}`
	)
	// tapeOf writes the session: the sampling request and its answer
	// (accepted with status, its body refusal when not 202) when ask.
	tapeOf := func(t *testing.T, ask bool, status int) string {
		h := newHandTape(t)
		msg, answered := h.msg, h.status
		msg(tape.ClientToServer, 1, init1)
		answered(1, 200, "application/json")
		msg(tape.ServerToClient, 1, initRes)
		msg(tape.ClientToServer, 2, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		answered(2, 202, "")
		msg(tape.ClientToServer, 3, call)
		answered(3, 200, "text/event-stream")
		if ask {
			msg(tape.ServerToClient, 3, sreq)
			msg(tape.ClientToServer, 4, sres)
			if status == http.StatusAccepted {
				answered(4, status, "")
			} else {
				answered(4, status, "application/json")
				msg(tape.ServerToClient, 4, refusal)
			}
		}
		msg(tape.ServerToClient, 3, callRes)
		return h.file()
	}
	tests := []struct {
		name            string
		ask             bool // the recording has the sampling request
		status          int  // the recorded answer's status
		exit            int
		refused, extra  int
		matched         int // initialize, the tool call, the refusal as recorded
		text, notInText string
	}{
		{"recorded answer", true, http.StatusAccepted, 1, 1, 0, 2,
			`refused: step 4 (answer to server request 0): the live server refused it with HTTP 400 Bad Request: "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"no thanks\"}}"`, "extra:"},
		{"fallback answer", false, 0, 1, 1, 1, 2,
			`refused: the fallback answer to server request sampling/createMessage (live id "live-0"): the live server refused it with HTTP 400`, "response to a frame"},
		{"refused as recorded", true, http.StatusBadRequest, 0, 0, 0, 3, "HTTP 400, as recorded", "refused:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			answered := make(chan struct{}, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				info := jsonrpc.Classify(body)
				switch {
				case r.Method != http.MethodPost:
					w.WriteHeader(http.StatusMethodNotAllowed)
				case info.Method == "initialize":
					w.Header().Set("Content-Type", "application/json")
					io.WriteString(w, initRes)
				case info.Method == "tools/call":
					// Ask, then answer the tool once the client answered.
					w.Header().Set("Content-Type", "text/event-stream")
					fmt.Fprintf(w, "event: message\ndata: %s\n\n", strings.Replace(sreq, `"id":0`, `"id":"live-0"`, 1))
					w.(http.Flusher).Flush()
					select {
					case <-answered:
					case <-time.After(5 * time.Second):
					}
					fmt.Fprintf(w, "event: message\ndata: %s\n\n", strings.Replace(callRes, `"id":2`, `"id":`+string(info.ID.Raw), 1))
				case info.Kind == jsonrpc.KindResponse || info.Kind == jsonrpc.KindError:
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusBadRequest)
					io.WriteString(w, refusal)
					answered <- struct{}{}
				default:
					w.WriteHeader(http.StatusAccepted)
				}
			}))
			t.Cleanup(srv.Close)
			rep, err := Run(context.Background(), loadTape(t, tapeOf(t, tc.ask, tc.status)), httpDial(srv.URL+"/mcp"), WithMaxSpeed())
			if err != nil {
				t.Fatal(err)
			}
			var text, js bytes.Buffer
			rep.WriteText(&text)
			if err := rep.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			s := rep.Sessions[0]
			if rep.ExitCode() != tc.exit || s.Refused != tc.refused || s.Extra != tc.extra || s.Matched != tc.matched || s.Sent != s.Steps ||
				!strings.Contains(text.String(), tc.text) || strings.Contains(text.String(), tc.notInText) {
				t.Fatalf("exit %d, %d refused, %d extra, %d matched, %d/%d sent; want exit %d, %d refused, %d extra, %d matched, all sent, %q and no %q in:\n%s",
					rep.ExitCode(), s.Refused, s.Extra, s.Matched, s.Sent, s.Steps, tc.exit, tc.refused, tc.extra, tc.matched, tc.text, tc.notInText, text.String())
			}
			var got struct {
				Sessions []struct {
					Refused  int       `json:"refused"`
					Problems []Problem `json:"problems"`
				} `json:"sessions"`
			}
			if err := json.Unmarshal(js.Bytes(), &got); err != nil {
				t.Fatal(err)
			}
			kinds := 0
			for _, p := range got.Sessions[0].Problems {
				if p.Kind == "refused" {
					kinds++
				}
			}
			if got.Sessions[0].Refused != tc.refused || kinds != tc.refused {
				t.Errorf("JSON: refused %d, %d problems of kind refused; want %d:\n%s", got.Sessions[0].Refused, kinds, tc.refused, js.String())
			}
		})
	}
}
