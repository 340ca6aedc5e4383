//lint:file-ignore SA1019 the tests replay sampling, deprecated from 2026-07-28 (SEP-2577) but live on every version the SDK serves.

package replay

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
	"github.com/mcptape/mcptape/transport"
)

// elicitOpts answer elicitation and sampling requests.
var elicitOpts = &mcp.ClientOptions{
	ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
	},
	CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "sampled"}}, nil
	},
}

// richScenario uses tools, progress, a cancelled call and both kinds of
// server-to-client request.
func richScenario(t *testing.T) func(ctx context.Context, cs *mcp.ClientSession) {
	return func(ctx context.Context, cs *mcp.ClientSession) {
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
		call(t, ctx, cs, "echo", map[string]any{"message": "hello"})
		call(t, ctx, cs, "add", map[string]any{"a": 2, "b": 3})
		p := &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 60, "steps": 3}}
		p.SetProgressToken("tok-1")
		if _, err := cs.CallTool(ctx, p); err != nil {
			t.Fatal(err)
		}
		call(t, ctx, cs, "ask", map[string]any{"kind": "elicitation"})
		call(t, ctx, cs, "ask", map[string]any{"kind": "sampling"})
		cctx, cancel := context.WithTimeout(ctx, 150*time.Millisecond)
		_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": 5000}})
		cancel()
		if err == nil {
			t.Fatal("cancelled sleep returned no error")
		}
		call(t, ctx, cs, "echo", map[string]any{"message": "after cancel"})
	}
}

func TestReplayStdioGoSDKSession(t *testing.T) {
	path := recordStdio(t, "2025-11-25", elicitOpts, richScenario(t))
	sessions := loadTape(t, path)
	if len(sessions) != 1 {
		t.Fatalf("%d sessions, want 1", len(sessions))
	}
	s := sessions[0]
	var out bytes.Buffer
	rec := newTapeBuffer(t, &out)
	ctx := context.Background()
	rep, err := Run(ctx, sessions, stdioDial(""), WithSpeed(10), WithTimeout(10*time.Second), WithTape(rec))
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	sr := rep.Sessions[0]
	if rep.ExitCode() != 0 {
		t.Fatalf("exit code %d, want 0:\n%s", rep.ExitCode(), text.String())
	}
	// Every recorded response matched; both server requests were answered
	// from the recording.
	// The answers of the eight calls that were not cancelled matched.
	if sr.Matched != 8 || sr.ServerRequests != 2 || countKind(s, jsonrpc.KindRequest) != 2 {
		t.Errorf("matched %d, server requests %d:\n%s", sr.Matched, sr.ServerRequests, text.String())
	}
	// The replay tape shows the cancel naming the live id of the cancelled
	// sleep, and the answers to server requests under the live ids.
	checkReplayTape(t, out.Bytes())
}

func countKind(s *Session, k jsonrpc.Kind) int {
	n := 0
	for _, m := range s.Server {
		if m.Kind == k {
			n++
		}
	}
	return n
}

func TestReplayChangedAnswerExitsOne(t *testing.T) {
	path := recordStdio(t, "2025-11-25", nil, func(ctx context.Context, cs *mcp.ClientSession) {
		call(t, ctx, cs, "add", map[string]any{"a": 1, "b": 1})
		call(t, ctx, cs, "echo", map[string]any{"message": "hello"})
	})
	rep, err := Run(context.Background(), loadTape(t, path), stdioDial("v2: "), WithMaxSpeed())
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	if rep.ExitCode() != 1 {
		t.Fatalf("exit code %d, want 1:\n%s", rep.ExitCode(), text.String())
	}
	t.Logf("report:\n%s", text.String())
	sr := rep.Sessions[0]
	if sr.Differed != 1 || len(sr.Differences) != 1 {
		t.Fatalf("differed %d:\n%s", sr.Differed, text.String())
	}
	d := sr.Differences[0]
	if d.Method != "tools/call" || d.Name != "echo" {
		t.Errorf("difference belongs to %q %q, want tools/call echo", d.Method, d.Name)
	}
	var paths []string
	for _, x := range d.Diffs {
		paths = append(paths, x.Path)
	}
	want := []string{"result.content[0].text", "result.structuredContent.message"}
	if strings.Join(paths, ",") != strings.Join(want, ",") {
		t.Errorf("diff paths %q, want %q\n%s", paths, want, text.String())
	}
	if !strings.Contains(text.String(), `+ result.content[0].text: "v2: hello"`) {
		t.Errorf("text report lacks the live value:\n%s", text.String())
	}
}

func TestReplayBrokenServers(t *testing.T) {
	needShell(t)
	path := recordStdio(t, "2025-11-25", nil, func(ctx context.Context, cs *mcp.ClientSession) {
		call(t, ctx, cs, "echo", map[string]any{"message": "hello"})
	})
	sessions := loadTape(t, path)
	// Only the server that hangs waits for the timeout: the others must
	// fail for what they do, however long a busy machine takes to start
	// their shell (300 ms was not always enough).
	const long = 10 * time.Second
	tests := []struct {
		name, script, want string
		timeout            time.Duration
	}{
		{"dies", `read line; exit 3`, "the server closed the connection (exit status 3) before answering step 1 (initialize, recorded id 1)", long},
		{"exits", `read line; exit 0`, "the server closed the connection (exit status 0) before answering step 1 (initialize, recorded id 1)", long},
		{"hangs", `cat >/dev/null`, "no answer to initialize, recorded id 1 within 300ms", 300 * time.Millisecond},
		{"garbage", `read line; echo 'this is not json'; cat >/dev/null`, `not JSON: "this is not json"`, long},
		{"not-jsonrpc", `read line; echo '{"hello":1}'; cat >/dev/null`, `not a JSON-RPC message`, long},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dial := func(ctx context.Context, _ *Session) (transport.Conn, error) {
				return transport.DialStdio(ctx, []string{"sh", "-c", tc.script}, transport.WithGrace(time.Second))
			}
			start := time.Now()
			rep, err := Run(context.Background(), sessions, dial, WithMaxSpeed(), WithTimeout(tc.timeout))
			if err != nil {
				t.Fatal(err)
			}
			sr := rep.Sessions[0]
			if rep.ExitCode() != 2 || !strings.Contains(sr.Error, tc.want) {
				t.Errorf("exit %d, error %q; want 2 and %q", rep.ExitCode(), sr.Error, tc.want)
			}
			if sr.Sent != 1 {
				t.Errorf("sent %d steps, want 1 (initialize)", sr.Sent)
			}
			if time.Since(start) > 5*time.Second {
				t.Errorf("took %v", time.Since(start))
			}
			var text bytes.Buffer
			rep.WriteText(&text)
			if !strings.Contains(text.String(), "FAILED") || !strings.Contains(text.String(), "1/") {
				t.Errorf("text report:\n%s", text.String())
			}
		})
	}
}

// newTapeBuffer returns a tape writer into buf.
func newTapeBuffer(t *testing.T, buf *bytes.Buffer, opts ...tape.Option) *tape.Writer {
	t.Helper()
	w, err := tape.NewWriter(buf, tape.Header{Tool: "mcptape", Transport: "stdio"}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// checkReplayTape checks, in the tape a replay wrote, that the cancel names
// the live id of the long sleep, and that every client
// response answers a server request of the replay under its live id.
func checkReplayTape(t *testing.T, data []byte) {
	t.Helper()
	checkReplayTapeCancel(t, data, `"ms":5000`, 2)
}

// checkReplayTapeCancel checks, in the tape a replay wrote, that the one
// cancel names the live id of a request whose live frame holds marker, and
// that it holds answers client responses, each under the live id of a
// server request of the replay.
func checkReplayTapeCancel(t *testing.T, data []byte, marker string, answers int) {
	t.Helper()
	r, err := tape.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	sent := map[string]string{} // live id -> frame
	serverReqs := map[string]bool{}
	cancels, answered := 0, 0
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Type != tape.TypeMessage {
			continue
		}
		info := jsonrpc.Classify(rec.Frame)
		switch {
		case rec.Dir == tape.ServerToClient && info.Kind == jsonrpc.KindRequest:
			serverReqs[info.ID.Key()] = true
		case rec.Dir == tape.ClientToServer && info.Kind == jsonrpc.KindRequest:
			sent[info.ID.Key()] = string(rec.Frame)
		case rec.Dir == tape.ClientToServer && info.Method == "notifications/cancelled":
			cancels++
			if got := info.CancelTarget.Key(); !strings.Contains(sent[got], marker) {
				t.Errorf("cancel targets live id %s, which was sent as %s", got, sent[got])
			}
		case rec.Dir == tape.ClientToServer && (info.Kind == jsonrpc.KindResponse || info.Kind == jsonrpc.KindError):
			answered++
			if !serverReqs[info.ID.Key()] {
				t.Errorf("client answer under id %s, which no live server request had", info.ID.Key())
			}
		}
	}
	if cancels != 1 || answered != answers {
		t.Errorf("replay tape has %d cancels and %d answers, want 1 and %d", cancels, answered, answers)
	}
}

// TestReplayFailedInitialize: when the live initialize fails, the report
// names step 1 (initialize) and why, and no later step counts as sent.
func TestReplayFailedInitialize(t *testing.T) {
	sessions := writeTape(t, [][2]string{
		{"c2s", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`},
		{"c2s", `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{"c2s", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`},
		{"s2c", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`},
		{"s2c", `{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`},
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	refusing := func(ctx context.Context, _ *Session) (transport.Conn, error) {
		return newFakeConn(func(frame []byte) []string {
			if info := jsonrpc.Classify(frame); info.Method == "initialize" {
				return []string{`{"jsonrpc":"2.0","id":` + string(info.ID.Raw) + `,"error":{"code":-32602,"message":"Unsupported protocol version"}}`}
			}
			return nil
		}), nil
	}
	tests := []struct {
		name string
		dial DialFunc
		sent int // -1: not checked (a stdio client sends on without waiting)
		want string
	}{
		{"connection refused", httpDial(refused), 0, "sending step 1 (initialize, recorded id 1): "},
		{"404", httpDial(strings.TrimSuffix(refHTTP(t, refserver.HTTPConfig{}), "/mcp") + "/nope"), 0, "sending step 1 (initialize, recorded id 1): "},
		{"error answer", refusing, -1, `step 1 (initialize, recorded id 1) failed: the server answered error -32602: "Unsupported protocol version"`},
	}
	reasons := map[string]string{"connection refused": "connection refused", "404": "404"}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Run(context.Background(), sessions, tc.dial, WithMaxSpeed(), WithTimeout(5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			sr := rep.Sessions[0]
			if rep.ExitCode() != 2 || !strings.Contains(sr.Error, tc.want) || !strings.Contains(sr.Error, reasons[tc.name]) || (tc.sent >= 0 && sr.Sent != tc.sent) {
				t.Errorf("exit %d, sent %d, error %q; want 2, %d, %q", rep.ExitCode(), sr.Sent, sr.Error, tc.sent, tc.want)
			}
		})
	}
}

// TestReplayCutTape: a tape cut while the session ran (no close event, a
// damaged tail) lacks the answers to its last requests; their live answers
// and progress are after the cut, not extra, so the verdict is the same on
// every run.
func TestReplayCutTape(t *testing.T) {
	data := tapeBytes(t, [][2]string{
		{"c2s", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`},
		{"s2c", initAnswer("1")},
		{"c2s", `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{"c2s", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"p"}}}`},
		{"s2c", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}`},
		{"c2s", `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`},
	})
	whole := loadBytes(t, data)
	// A frame cut after its magic number: the recorder was killed.
	cutData := append(bytes.Clone(data), 0x28, 0xb5, 0x2f, 0xfd, 0x04)
	cutPath := filepath.Join(t.TempDir(), "cut.jsonl.zst")
	if err := os.WriteFile(cutPath, cutData, 0o600); err != nil {
		t.Fatal(err)
	}
	inMemory, streamed := loadBytes(t, cutData), openStreamed(t, cutPath)
	if whole[0].Cut || !inMemory[0].Cut || !streamed[0].Cut {
		t.Fatalf("Cut: whole tape %v, cut tape %v (streamed %v); want false, true, true", whole[0].Cut, inMemory[0].Cut, streamed[0].Cut)
	}
	dial := func(ctx context.Context, _ *Session) (transport.Conn, error) {
		return newFakeConn(mcpServer(func(_ []byte, info *jsonrpc.Info, id string) []string {
			if info.ProgressToken.Type != jsonrpc.IDAbsent {
				tok := string(info.ProgressToken.Raw)
				return []string{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + tok + `,"progress":1}}`,
					`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":` + tok + `,"progress":2}}`,
					`{"jsonrpc":"2.0","id":` + id + `,"result":{}}`}
			}
			return []string{`{"jsonrpc":"2.0","id":` + id + `,"result":{"tools":[]}}`}
		})), nil
	}
	for i := range 30 {
		cut := inMemory
		if i%2 == 1 {
			cut = streamed
		}
		rep, err := Run(context.Background(), cut, dial, WithMaxSpeed(), WithTimeout(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if sr := rep.Sessions[0]; rep.ExitCode() != 0 || sr.Matched != 1 || sr.Extra != 0 {
			var text bytes.Buffer
			rep.WriteText(&text)
			t.Fatalf("run %d: exit %d; want 0, 1 matched, nothing extra:\n%s", i+1, rep.ExitCode(), text.String())
		}
	}
}
