//lint:file-ignore SA1019 the tests exercise sampling, deprecated from 2026-07-28 (SEP-2577) but live on every version the SDK serves.

package refserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestToolsEverywhere calls every simple tool, the resource and the prompt
// on every transport with every protocol version.
func TestToolsEverywhere(t *testing.T) {
	s := newServer(t, WithEchoPrefix("p:"))
	for _, kind := range allTransports {
		for _, v := range allVersions {
			t.Run(kind+"/"+v, func(t *testing.T) {
				t.Parallel()
				cs := connect(t, s, kind, v, nil)
				if got, want := cs.InitializeResult().ProtocolVersion, wantVersion(kind, v); got != want {
					t.Errorf("negotiated version %q, want %q", got, want)
				}
				checkTools(t, cs)
			})
		}
	}
}

// checkTools checks the answers of the simple tools, the resource and the
// prompt on cs, a session with a server whose echo prefix is "p:".
func checkTools(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	ctx := context.Background()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range lt.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if want := []string{"add", "ask", "blob", "echo", "fail", "sleep"}; !slices.Equal(names, want) {
		t.Errorf("tools %v, want %v", names, want)
	}

	tests := []struct {
		tool       string
		args       map[string]any
		text       string
		isError    bool
		structured string // JSON of structuredContent, if any
	}{
		{"echo", map[string]any{"message": "hello"}, "p:hello", false, `{"message":"p:hello"}`},
		{"echo", map[string]any{"message": ""}, "p:", false, `{"message":"p:"}`},
		{"add", map[string]any{"a": 1, "b": 2.5}, "3.5", false, `{"sum":3.5}`},
		{"add", map[string]any{"a": -4, "b": 4}, "0", false, `{"sum":0}`},
		{"add", map[string]any{"a": 1e308, "b": 1e308}, "add: 1e+308 + 1e+308 overflows", true, ""},
		{"fail", map[string]any{"mode": "tool"}, "requested failure", true, ""},
		{"fail", map[string]any{"mode": "bogus"}, "", true, ""},
		{"echo", map[string]any{}, "", true, ""}, // message is required
		{"sleep", map[string]any{"ms": 1}, "slept 1 ms", false, ""},
		{"sleep", map[string]any{"ms": -1}, "sleep: ms -1 out of range 0..3600000", true, ""},
		{"sleep", map[string]any{"ms": 1, "steps": MaxSleepSteps + 1}, "sleep: steps 10001 out of range 0..10000 (0 means 1)", true, ""},
		{"blob", map[string]any{"bytes": 30}, "abcdefghijklmnopqrstuvwxyzabcd", false, ""},
		{"blob", map[string]any{"bytes": -1}, "blob: bytes -1 out of range 0..67108864", true, ""},
		{"blob", map[string]any{"bytes": MaxBlobBytes + 1}, "blob: bytes 67108865 out of range 0..67108864", true, ""},
	}
	for _, tt := range tests {
		res := call(t, cs, tt.tool, tt.args)
		if res.IsError != tt.isError {
			t.Errorf("%s %v: isError %v, want %v (%q)", tt.tool, tt.args, res.IsError, tt.isError, text(res))
		}
		if tt.text != "" && text(res) != tt.text {
			t.Errorf("%s %v: text %q, want %q", tt.tool, tt.args, text(res), tt.text)
		}
		if tt.structured != "" {
			got, _ := json.Marshal(res.StructuredContent)
			if string(got) != tt.structured {
				t.Errorf("%s %v: structured %s, want %s", tt.tool, tt.args, got, tt.structured)
			}
		}
	}

	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "fail", Arguments: map[string]any{"mode": "rpc"}})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != CodeRequestedFailure || werr.Message != "requested failure" {
		t.Errorf("fail rpc: error %v, want JSON-RPC error %d \"requested failure\"", err, CodeRequestedFailure)
	}

	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: ReadmeURI})
	if err != nil {
		t.Fatalf("resources/read: %v", err)
	}
	if len(rr.Contents) != 1 || rr.Contents[0].Text != ReadmeText || rr.Contents[0].MIMEType != "text/plain" {
		t.Errorf("resources/read: %+v", rr.Contents)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mcptape://nothing"}); err == nil {
		t.Errorf("resources/read of an unknown URI: no error")
	}

	gp, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Ada"}})
	if err != nil {
		t.Fatalf("prompts/get: %v", err)
	}
	if len(gp.Messages) != 1 || gp.Messages[0].Role != "user" || gp.Messages[0].Content.(*mcp.TextContent).Text != "Please greet Ada warmly." {
		t.Errorf("prompts/get greet: %+v", gp.Messages)
	}
	_, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet"})
	if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("prompts/get greet without name: error %v, want invalid params", err)
	}
}

// TestBlobSizes checks that blob answers exactly the bytes asked for,
// including (without the race detector, which makes it slow) a result
// above the SDK client's default 16 MiB line limit.
func TestBlobSizes(t *testing.T) {
	cs := connect(t, newServer(t), onStdio, "", nil)
	sizes := []int{0, 1, 25, 26, 27, 1000, 1 << 20}
	if !raceEnabled {
		sizes = append(sizes, 16<<20+1)
	}
	for _, n := range sizes {
		got := text(call(t, cs, "blob", map[string]any{"bytes": n}))
		if len(got) != n {
			t.Errorf("blob %d: %d bytes", n, len(got))
			continue
		}
		for i := 0; i < n; i += 4093 { // spot checks of the pattern
			if got[i] != alphabet[i%26] {
				t.Fatalf("blob %d: byte %d is %q, want %q", n, i, got[i], alphabet[i%26])
			}
		}
	}
}

// progressLog collects the progress notifications a client receives.
type progressLog struct {
	mu    sync.Mutex
	items []*mcp.ProgressNotificationParams
	got   chan struct{}
}

func (p *progressLog) handler(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p.mu.Lock()
	p.items = append(p.items, req.Params)
	p.mu.Unlock()
	select {
	case p.got <- struct{}{}:
	default:
	}
}

func (p *progressLog) snapshot() []*mcp.ProgressNotificationParams {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.items)
}

// TestSleepProgress checks that sleep sends one progress notification per
// step, in order, when the call has a progress token, and none without.
// (That they come before the result is checked on the wire, in
// TestWireOrder.)
func TestSleepProgress(t *testing.T) {
	cases := []struct{ kind, version string }{
		{onStdio, "2025-06-18"}, {onStdio, "2026-07-28"}, {onHTTP, "2025-11-25"},
		{onStateless, "2026-07-28"}, {onStateless, "2025-03-26"},
	}
	for _, c := range cases {
		t.Run(c.kind+"/"+c.version, func(t *testing.T) {
			t.Parallel()
			pl := &progressLog{got: make(chan struct{}, 100)}
			cs := connect(t, newServer(t), c.kind, c.version, &mcp.ClientOptions{ProgressNotificationHandler: pl.handler})
			const steps = 4
			start := time.Now()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{
				Meta:      mcp.Meta{"progressToken": "tok-1"},
				Name:      "sleep",
				Arguments: map[string]any{"ms": 80, "steps": steps},
			})
			if err != nil {
				t.Fatal(err)
			}
			if el := time.Since(start); el < 80*time.Millisecond {
				t.Errorf("sleep 80 ms returned after %v", el)
			}
			if text(res) != "slept 80 ms" {
				t.Errorf("text %q", text(res))
			}
			deadline := time.After(2 * time.Second)
			for len(pl.snapshot()) < steps {
				select {
				case <-pl.got:
				case <-deadline:
					t.Fatalf("got %d progress notifications, want %d", len(pl.snapshot()), steps)
				}
			}
			items := pl.snapshot()
			if len(items) != steps {
				t.Fatalf("got %d progress notifications, want %d", len(items), steps)
			}
			for i, p := range items {
				want := fmt.Sprintf("step %d/%d", i+1, steps)
				if p.ProgressToken != "tok-1" || p.Progress != float64(i+1) || p.Total != steps || p.Message != want {
					t.Errorf("progress %d: %+v, want token tok-1, progress %d/%d, %q", i, p, i+1, steps, want)
				}
			}
			// Without a token: no notifications.
			call(t, cs, "sleep", map[string]any{"ms": 5, "steps": 3})
			time.Sleep(50 * time.Millisecond)
			if n := len(pl.snapshot()); n != steps {
				t.Errorf("a call without progressToken gave %d more notifications", n-steps)
			}
		})
	}
}

// TestSleepCancel checks that cancelling a sleep call returns at once on
// the client and stops the tool on the server.
func TestSleepCancel(t *testing.T) {
	cases := []struct{ kind, version string }{
		{onStdio, "2025-11-25"}, {onStdio, "2026-07-28"}, {onHTTP, "2025-11-25"}, {onStateless, "2026-07-28"},
	}
	for _, c := range cases {
		t.Run(c.kind+"/"+c.version, func(t *testing.T) {
			t.Parallel()
			logs := newLogSink()
			pl := &progressLog{got: make(chan struct{}, 100)}
			cs := connect(t, newServer(t, WithLogger(slog.New(logs))), c.kind, c.version,
				&mcp.ClientOptions{ProgressNotificationHandler: pl.handler})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			errc := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &mcp.CallToolParams{
					Meta:      mcp.Meta{"progressToken": 7},
					Name:      "sleep",
					Arguments: map[string]any{"ms": 60_000, "steps": 600},
				})
				errc <- err
			}()
			select { // the tool is running once its first progress arrives
			case <-pl.got:
			case <-time.After(5 * time.Second):
				t.Fatal("no progress from sleep")
			}
			cancel()
			select {
			case err := <-errc:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("cancelled call: error %v, want context.Canceled", err)
				}
			case <-time.After(time.Second):
				t.Fatal("cancelled call did not return within 1 s")
			}
			logs.waitFor(t, "sleep stopped", 3*time.Second)
			// The session still works.
			if got := text(call(t, cs, "echo", map[string]any{"message": "after"})); got != "after" {
				t.Errorf("echo after cancel: %q", got)
			}
		})
	}
}

// TestAsk checks both kinds of ask on every way the server can reach the
// client: real server-to-client requests (stdio and stateful HTTP up to
// 2025-11-25) and multi round-trip results (2026-07-28).
func TestAsk(t *testing.T) {
	cases := []struct{ kind, version string }{
		{onStdio, "2024-11-05"}, {onStdio, "2025-06-18"}, {onStdio, "2025-11-25"}, {onStdio, "2026-07-28"},
		{onHTTP, "2025-11-25"}, {onHTTP, "2025-03-26"}, {onJSON, "2025-11-25"}, {onStateless, "2026-07-28"},
	}
	for _, c := range cases {
		t.Run(c.kind+"/"+c.version, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var elicited, sampled []string
			copts := &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					elicited = append(elicited, req.Params.Message)
					mu.Unlock()
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
				},
				CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
					mu.Lock()
					sampled = append(sampled, req.Params.Messages[0].Content.(*mcp.TextContent).Text)
					mu.Unlock()
					return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "sampled text"}}, nil
				},
			}
			cs := connect(t, newServer(t), c.kind, c.version, copts)
			if got, want := text(call(t, cs, "ask", map[string]any{"kind": "elicitation"})), `{"action":"accept","content":{"name":"Ada"}}`; got != want {
				t.Errorf("ask elicitation: %q, want %q", got, want)
			}
			if got := text(call(t, cs, "ask", map[string]any{"kind": "sampling"})); got != "sampled text" {
				t.Errorf("ask sampling: %q", got)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(elicited) != 1 || !strings.Contains(elicited[0], "what is your name") {
				t.Errorf("client saw elicitations %q", elicited)
			}
			if len(sampled) != 1 || !strings.Contains(sampled[0], "say something") {
				t.Errorf("client saw sampling requests %q", sampled)
			}
		})
	}
}

// TestAskDeclined checks that an elicitation's decline is reported, not
// treated as an error.
func TestAskDeclined(t *testing.T) {
	cs := connect(t, newServer(t), onStdio, "2025-11-25", &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	res := call(t, cs, "ask", map[string]any{"kind": "elicitation"})
	if res.IsError || text(res) != `{"action":"decline"}` {
		t.Errorf("declined elicitation: isError %v, %q", res.IsError, text(res))
	}
}

// TestAskWithoutCapability checks the tool error a client without the
// capability gets, including on stateless HTTP with an old protocol, where
// the server cannot know the client's capabilities.
func TestAskWithoutCapability(t *testing.T) {
	withHandlers := &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Content: &mcp.TextContent{Text: "x"}}, nil
		},
	}
	cases := []struct {
		kind, version string
		copts         *mcp.ClientOptions
	}{
		{onStdio, "2025-11-25", nil},
		{onStdio, "2026-07-28", nil},
		{onHTTP, "2025-06-18", nil},
		{onStateless, "2025-11-25", withHandlers},
	}
	for _, c := range cases {
		t.Run(c.kind+"/"+c.version, func(t *testing.T) {
			cs := connect(t, newServer(t), c.kind, c.version, c.copts)
			for _, kind := range []string{"elicitation", "sampling"} {
				res := call(t, cs, "ask", map[string]any{"kind": kind})
				want := "ask: the client did not declare the " + kind + " capability"
				if !res.IsError || text(res) != want {
					t.Errorf("ask %s: isError %v, %q; want %q", kind, res.IsError, text(res), want)
				}
			}
		})
	}
}

// TestAskAnswer checks how ask renders the client's answers, including
// answers that do not fit the kind asked.
func TestAskAnswer(t *testing.T) {
	tests := []struct {
		kind    string
		resp    mcp.InputResponse
		want    string
		wantErr string
	}{
		{"elicitation", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"b": 1, "a": "x"}}, `{"action":"accept","content":{"a":"x","b":1}}`, ""},
		{"elicitation", &mcp.ElicitResult{Action: "cancel"}, `{"action":"cancel"}`, ""},
		{"sampling", &mcp.CreateMessageWithToolsResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, "hi", ""},
		{"sampling", &mcp.CreateMessageWithToolsResult{Content: []mcp.Content{&mcp.ImageContent{MIMEType: "image/png"}}}, "(non-text content *mcp.ImageContent)", ""},
		{"sampling", &mcp.CreateMessageResult{Content: &mcp.TextContent{Text: "old"}}, "old", ""},
		{"sampling", &mcp.CreateMessageWithToolsResult{}, "", "has no content"},
		{"sampling", &mcp.ElicitResult{Action: "accept"}, "", "unexpected answer"},
		{"elicitation", &mcp.ListRootsResult{}, "", "unexpected answer"},
	}
	for _, tt := range tests {
		got, err := askAnswer(tt.kind, tt.resp)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("askAnswer(%s, %T): error %v, want %q", tt.kind, tt.resp, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("askAnswer(%s, %T) = %q, %v; want %q", tt.kind, tt.resp, got, err, tt.want)
		}
	}
}

// TestOptions checks that bad options are errors and good ones apply.
func TestOptions(t *testing.T) {
	bad := []struct {
		name string
		opt  Option
	}{
		{"empty name", WithImplementation("", "1")},
		{"empty version", WithImplementation("x", "")},
		{"nil logger", WithLogger(nil)},
		{"no versions", WithProtocolVersions()},
		{"unknown version", WithProtocolVersions("2025-06-18", "1999-01-01")},
	}
	for _, tt := range bad {
		if _, err := New(tt.opt); err == nil {
			t.Errorf("%s: no error", tt.name)
		}
	}

	logs := newLogSink()
	s := newServer(t, WithImplementation("custom", "9.9"), WithProtocolVersions("2025-06-18"), WithLogger(slog.New(logs)))
	cs := connect(t, s, onStdio, "2025-11-25", nil)
	logs.waitFor(t, "request", time.Second) // the initialize request, at debug level
	res := cs.InitializeResult()
	if res.ServerInfo.Name != "custom" || res.ServerInfo.Version != "9.9" {
		t.Errorf("serverInfo %+v", res.ServerInfo)
	}
	if res.ProtocolVersion != "2025-06-18" {
		t.Errorf("negotiated %q with a server limited to 2025-06-18", res.ProtocolVersion)
	}
	if res.Instructions != Instructions {
		t.Errorf("instructions %q", res.Instructions)
	}
	if got := ProtocolVersions(); !slices.Contains(got, "2024-11-05") || !slices.Contains(got, "2026-07-28") {
		t.Errorf("ProtocolVersions() = %v", got)
	}
}

// TestMaxConcurrency checks that WithMaxConcurrency(k) runs at most k tool
// calls at once: n sleep calls of ms each take at least ceil(n/k) rounds,
// and other methods are not held back.
func TestMaxConcurrency(t *testing.T) {
	cases := []struct {
		k, n, ms   int
		minElapsed time.Duration
	}{
		{k: 2, n: 6, ms: 600, minElapsed: 1800 * time.Millisecond},
		{k: 3, n: 4, ms: 600, minElapsed: 1200 * time.Millisecond},
	}
	// A ping held behind the tool calls would wait for a slot, at least
	// until the first calls end (ms less the 20 ms it starts after them);
	// one that goes through takes a round trip. Half of ms tells them
	// apart with room for a loaded machine (a 60 ms bound failed in CI
	// with a ping of 75 ms).
	for _, c := range cases {
		t.Run(fmt.Sprintf("k%d", c.k), func(t *testing.T) {
			t.Parallel()
			cs := connect(t, newServer(t, WithMaxConcurrency(c.k)), onHTTP, "", nil)
			start := time.Now()
			var wg sync.WaitGroup
			errs := make(chan error, c.n)
			for range c.n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "sleep", Arguments: map[string]any{"ms": c.ms}})
					errs <- err
				}()
			}
			// while the slots are taken, a ping still goes through
			time.Sleep(20 * time.Millisecond)
			pstart := time.Now()
			if err := cs.Ping(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			if d := time.Since(pstart); d >= time.Duration(c.ms/2)*time.Millisecond {
				t.Errorf("ping waited %v behind the tool calls", d)
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			if el := time.Since(start); el < c.minElapsed {
				t.Errorf("%d calls of %d ms with %d slots took %v, want at least %v", c.n, c.ms, c.k, el, c.minElapsed)
			}
		})
	}
	if _, err := New(WithMaxConcurrency(0)); err == nil {
		t.Error("WithMaxConcurrency(0) accepted")
	}
}
