package capture

// End-to-end tests against real MCP implementations we did not write:
// the MCP Inspector CLI and server-everything (TypeScript SDK), and the Go
// SDK client and conformance everything-server. Each exchange runs once
// directly and once through "mcptape record"; the outputs must be equal,
// and the tape must hold every message of the exchange.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/tape"
)

// wireMsg is the part of a JSON-RPC message the tests look at.
type wireMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// tapeMessages decodes the message frames of one direction.
func tapeMessages(t testing.TB, recs []tape.Record, dir tape.Direction) []wireMsg {
	t.Helper()
	var out []wireMsg
	for _, r := range recs {
		if r.Type == tape.TypeMessage && r.Dir == dir {
			var m wireMsg
			if err := json.Unmarshal(r.Frame, &m); err != nil {
				t.Fatalf("%s frame %q: %v", dir, r.Frame, err)
			}
			out = append(out, m)
		}
	}
	return out
}

// checkAnswered checks that every request recorded in one direction got
// exactly one response in the other, except those listed as unanswered.
func checkAnswered(t testing.TB, reqs, resps []wireMsg, unanswered ...string) {
	t.Helper()
	answers := map[string]int{}
	for _, m := range resps {
		if m.Method == "" {
			answers[string(m.ID)]++
		}
	}
	for _, m := range reqs {
		if m.Method == "" || m.ID == nil {
			continue
		}
		if n := answers[string(m.ID)]; n != 1 && !slices.Contains(unanswered, string(m.ID)) {
			t.Fatalf("request %s %s got %d responses in the tape", m.Method, m.ID, n)
		}
	}
}

func jsonEqual(t testing.TB, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%q: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%q: %v", b, err)
	}
	return reflect.DeepEqual(x, y)
}

func TestRecordInspectorE2E(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs node")
	}
	server := append(peertest.ServerEverything(t), "stdio")
	bin := mcptapeBin(t)
	tests := []struct {
		name   string
		args   []string // Inspector options after the target
		method string
		want   string // in the output
	}{
		{"tools/list", []string{"--method", "tools/list"}, "tools/list", `"name": "echo"`},
		{"tools/call echo", []string{"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=hi there"}, "tools/call", "Echo: hi there"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			tp := filepath.Join(t.TempDir(), "t.jsonl.zst")
			// Both runs at once; the proxied one is exactly what a user puts
			// in a client's configuration.
			runs := []*exec.Cmd{
				peertest.InspectorCommand(t, ctx, slices.Concat(server, tt.args)...),
				peertest.InspectorCommand(t, ctx, slices.Concat([]string{bin, "record", "-o", tp, "--"}, server, tt.args)...),
			}
			outs := make([]string, len(runs))
			errs := make([]error, len(runs))
			var wg sync.WaitGroup
			for i, cmd := range runs {
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				wg.Add(1)
				go func() {
					defer wg.Done()
					out, err := cmd.Output()
					outs[i] = string(out)
					if err != nil {
						errs[i] = fmt.Errorf("%v: %v\n%s", cmd.Args, err, stderr.Bytes())
					}
				}()
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			direct, proxied := outs[0], outs[1]
			if direct != proxied || !strings.Contains(direct, tt.want) {
				t.Fatalf("output through mcptape differs:\n%s\ndirect:\n%s", proxied, direct)
			}
			recs := completeTape(t, tp)
			c2s, s2c := tapeMessages(t, recs, tape.ClientToServer), tapeMessages(t, recs, tape.ServerToClient)
			var methods []string
			var final wireMsg
			for _, m := range c2s {
				methods = append(methods, m.Method)
				if m.Method == tt.method {
					final = m
				}
			}
			if len(methods) < 3 || methods[0] != "initialize" || methods[1] != "notifications/initialized" || final.ID == nil {
				t.Fatalf("client messages %q: want initialize, initialized, ..., %s", methods, tt.method)
			}
			checkAnswered(t, c2s, s2c)
			checkAnswered(t, s2c, c2s)
			for _, m := range s2c {
				if string(m.ID) == string(final.ID) && m.Method == "" && !jsonEqual(t, m.Result, []byte(direct)) {
					t.Fatalf("the recorded result differs from what the Inspector printed:\n%s", m.Result)
				}
			}
		})
	}
}

// sdkExchange is what a Go SDK client saw in one session.
type sdkExchange struct {
	Tools        []string
	Simple       string
	Progress     []string // progress notifications of the progress tool
	ProgressText string
	Sampling     string
	Elicitation  string
	CancelErr    bool   // the cancelled call returned an error
	After        string // a call made after the cancelled one
}

// runSDKSession drives the Go SDK conformance server through cmd with the
// Go SDK client: tools, progress, sampling and elicitation (server-to-client
// requests), a cancelled call, and a call after it. The client's own log
// of every message it wrote and read goes to log.
func runSDKSession(t *testing.T, cmd *exec.Cmd, log *syncBuffer) sdkExchange {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var mu sync.Mutex
	var ex sdkExchange
	cancelProgress := make(chan struct{}, 16) // progress of the call to cancel
	client := mcp.NewClient(&mcp.Implementation{Name: "mcptape-test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			switch r.Params.ProgressToken {
			case "tok":
				ex.Progress = append(ex.Progress, fmt.Sprintf("%v/%v %s", r.Params.Progress, r.Params.Total, r.Params.Message))
			case "cancel-me":
				cancelProgress <- struct{}{}
			}
		},
		//lint:ignore SA1019 sampling is deprecated from 2026-07-28 but still on the wire; the proxy must record it.
		CreateMessageHandler: func(_ context.Context, r *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			//lint:ignore SA1019 as above.
			return &mcp.CreateMessageResult{Model: "test-model", Role: "assistant", Content: &mcp.TextContent{Text: "sampled"}}, nil
		},
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"username": "ada"}}, nil
		},
	})
	// The answer to the call cancelled below waits until that call has
	// returned: else a test goroutine later than the server's answer (150
	// ms after its first progress) cancels an answered call, which returns
	// no error and sends no cancel.
	hold := peertest.NewAnswerHold(`"cancel-me"`)
	tr := &mcp.LoggingTransport{Transport: hold.Transport(&mcp.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}), Writer: log}
	// 2025-11-25 keeps server-to-client requests on stdio.
	cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		ex.Tools = append(ex.Tools, tool.Name)
	}
	text := func(name string, args any, meta mcp.Meta) string {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args, Meta: meta})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
	ex.Simple = text("test_simple_text", nil, nil)
	ex.ProgressText = text("test_tool_with_progress", nil, mcp.Meta{"progressToken": "tok"})
	ex.Sampling = text("test_sampling", map[string]any{"prompt": "hi"}, nil)
	ex.Elicitation = text("test_elicitation", map[string]any{"message": "name?"}, nil)

	// A call cancelled while the server is working on it: the client sends
	// notifications/cancelled, and the session must go on working.
	cctx, ccancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "test_tool_with_progress", Meta: mcp.Meta{"progressToken": "cancel-me"}})
		errc <- err
	}()
	<-cancelProgress
	ccancel()
	ex.CancelErr = <-errc != nil
	hold.Release()
	ex.After = text("test_simple_text", nil, nil)
	// The server still answers the cancelled call (late); wait until the
	// client has read that answer so that its log is complete.
	waitFor(t, func() bool { return answeredInLog(log.Bytes(), "cancel-me") })
	if err := cs.Ping(ctx, nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	return ex
}

// answeredInLog reports whether the request that carries marker, as
// written by the client, has an answer read by the client.
func answeredInLog(log []byte, marker string) bool {
	written, read := loggedMessages(nil, log)
	for _, w := range written {
		if !bytes.Contains(w, []byte(marker)) {
			continue
		}
		var req wireMsg
		if json.Unmarshal(w, &req) != nil || req.ID == nil {
			continue
		}
		for _, r := range read {
			var m wireMsg
			if json.Unmarshal(r, &m) == nil && m.Method == "" && string(m.ID) == string(req.ID) {
				return true
			}
		}
	}
	return false
}

// loggedMessages parses a LoggingTransport log into the messages written
// (client to server) and read (server to client), as raw JSON.
func loggedMessages(_ testing.TB, log []byte) (written, read [][]byte) {
	for _, line := range bytes.Split(log, []byte("\n")) {
		switch {
		case bytes.HasPrefix(line, []byte("write: ")):
			written = append(written, bytes.TrimPrefix(line, []byte("write: ")))
		case bytes.HasPrefix(line, []byte("read: ")):
			read = append(read, bytes.TrimPrefix(line, []byte("read: ")))
		}
	}
	return written, read
}

// sameMessages checks that the tape holds exactly the messages the client
// logged for one direction (compared as JSON values, in any order, since
// the client logs concurrent writes after the fact).
func sameMessages(t testing.TB, what string, logged [][]byte, recs []tape.Record, dir tape.Direction) {
	t.Helper()
	canon := func(raw []byte) string {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("%s: %q: %v", what, raw, err)
		}
		b, _ := json.Marshal(v)
		return string(b)
	}
	var want, got []string
	for _, m := range logged {
		want = append(want, canon(m))
	}
	for _, r := range recs {
		if r.Type == tape.TypeMessage && r.Dir == dir {
			got = append(got, canon(r.Frame))
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("%s: the tape holds %d messages, the client logged %d:\ntape   %q\nclient %q", what, len(got), len(want), got, want)
	}
}

func TestRecordGoSDKE2E(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the Go SDK peers")
	}
	server := peertest.GoEverythingServer(t)
	tp := filepath.Join(t.TempDir(), "t.jsonl.zst")
	var directLog, proxiedLog syncBuffer
	direct := runSDKSession(t, exec.Command(server), &directLog)
	proxied := runSDKSession(t, exec.Command(mcptapeBin(t), "record", "-o", tp, "--", server), &proxiedLog)
	if !reflect.DeepEqual(direct, proxied) {
		t.Fatalf("through mcptape the client saw\n%+v\ndirectly\n%+v", proxied, direct)
	}
	if len(direct.Progress) < 2 || !direct.CancelErr || direct.Sampling == "" || !strings.Contains(direct.Elicitation, "ada") {
		t.Fatalf("the exchange did not exercise progress, cancellation, sampling and elicitation: %+v", direct)
	}
	recs := completeTape(t, tp)
	written, read := loggedMessages(t, proxiedLog.Bytes())
	sameMessages(t, "client to server", written, recs, tape.ClientToServer)
	sameMessages(t, "server to client", read, recs, tape.ServerToClient)
	methods := map[string]bool{}
	for _, dir := range []tape.Direction{tape.ClientToServer, tape.ServerToClient} {
		for _, m := range tapeMessages(t, recs, dir) {
			methods[string(dir)+" "+m.Method] = true
		}
	}
	for _, want := range []string{"c2s notifications/cancelled", "s2c notifications/progress", "s2c sampling/createMessage", "s2c elicitation/create", "c2s ping"} {
		if !methods[want] {
			t.Fatalf("the tape lacks %s", want)
		}
	}
}
