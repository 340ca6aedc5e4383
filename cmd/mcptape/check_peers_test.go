package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/analysis"
	"github.com/mcptape/mcptape/check"
	"github.com/mcptape/mcptape/internal/peertest"
)

// The check signals that need a conversation to go a certain way, recorded
// from real servers through mcptape record and checked: the server's
// requests a client never answered (left out of errors<F%), tasks never
// finished, MRTR operations never retried. The clients are raw JSON-RPC
// written by the test, or the Go SDK's, so that the conversation goes the
// way wanted; the servers are the real peers.

// TestCheckUnansweredServerRequestsEverything records server-everything
// over Streamable HTTP for a client that declares sampling and elicitation
// and never answers the sampling/createMessage and elicitation/create
// requests the server sends for its tools trigger-sampling-request and
// trigger-elicitation-request, then deletes the session. Of the client's
// five requests (initialize, echo, a call of a tool that does not exist,
// the two trigger calls) one failed: errors<F% measures 20%, the server's
// two requests, never answered, in neither the failed requests nor the
// requests (counted, the share was 1 of 7).
func TestCheckUnansweredServerRequestsEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("real peers")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	run := recordHTTP(t, peertest.EverythingHTTP(t, ctx))
	c := newRawHTTPClient(t, ctx, run.url, "2025-11-25", `{"sampling":{},"elicitation":{}}`)
	c.call(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`, `"id":1`)
	c.call(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"no-such-tool","arguments":{}}}`, `"id":2`)
	c.call(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"trigger-sampling-request","arguments":{"prompt":"hi","maxTokens":5}}}`,
		`"method":"sampling/createMessage"`)
	c.call(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"trigger-elicitation-request","arguments":{}}}`,
		`"method":"elicitation/create"`)
	c.end()
	if err := run.stop(); err != nil {
		t.Fatal(err)
	}
	tp := run.tape
	if u := inspectJSON(t, tp).Unanswered; u.ServerRequests != 2 {
		t.Fatalf("inspect: %d server requests unanswered, want 2: %+v", u.ServerRequests, u)
	}
	code, res := checkJSON(t, tp, "--fail-on", "none", "--threshold", "errors<20%", "--threshold", "errors<=20%")
	if code != 1 {
		t.Errorf("check: exit %d, want 1 (errors<20%% broken)", code)
	}
	want := map[string]*float64{"threshold errors<20%": ptr(1.0 / 5), "threshold errors<=20%": nil}
	for _, c := range res.Cases {
		w, ok := want[c.Name]
		if !ok {
			continue
		}
		delete(want, c.Name)
		if c.Fired != (w != nil) || w != nil && (c.Measured == nil || *c.Measured != *w) {
			t.Errorf("%s: fired %v, measured %v, message %q; want measured 1/5 when broken", c.Name, c.Fired, c.Measured, c.Message)
		}
	}
	if len(want) > 0 {
		t.Errorf("no cases %v in %+v", want, res.Cases)
	}
}

// TestCheckUnfinishedTasksEverything records two Streamable HTTP sessions
// with server-everything, each starting a task (simulate-research-query,
// about 4 s of work), polling it once and deleting the session before it
// ends. Each session's unfinished case counts and names its own task; the
// signal is a note unless selected.
func TestCheckUnfinishedTasksEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("real peers")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	run := recordHTTP(t, peertest.EverythingHTTP(t, ctx))
	var sessions []string
	for range 2 {
		c := newRawHTTPClient(t, ctx, run.url, "2025-11-25", `{}`)
		answer := c.call(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"simulate-research-query","arguments":{"topic":"tapes"},"task":{"ttl":60000}}}`,
			`"id":2`)
		var created struct {
			Result struct {
				Task struct {
					TaskID string `json:"taskId"`
					Status string `json:"status"`
				} `json:"task"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(answer), &created); err != nil || created.Result.Task.TaskID == "" || created.Result.Task.Status != "working" {
			t.Fatalf("no task created (%v): %s", err, answer)
		}
		c.call(`{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"`+created.Result.Task.TaskID+`"}}`, `"id":3`)
		c.end()
		sessions = append(sessions, c.session)
	}
	if err := run.stop(); err != nil {
		t.Fatal(err)
	}
	tp := run.tape
	if code, res := checkJSON(t, tp); code != 0 || res.Failures != 0 {
		t.Errorf("check: exit %d, %d failures; want unfinished a note", code, res.Failures)
	}
	code, res := checkJSON(t, tp, "--fail-on", "unfinished")
	if code != 1 {
		t.Errorf("check --fail-on unfinished: exit %d, want 1", code)
	}
	var failed []string
	for _, c := range res.Cases {
		if !c.Failed() {
			continue
		}
		failed = append(failed, c.Session)
		if c.Signal != check.SignalUnfinished || c.Count != 1 || len(c.Details) != 1 || !strings.Contains(c.Details[0], "tools/call id 2 simulate-research-query") {
			t.Errorf("case %+v, want the session's one unfinished task", c)
		}
	}
	slices.Sort(failed)
	slices.Sort(sessions)
	if !slices.Equal(failed, sessions) {
		t.Errorf("failed cases of sessions %q, want one per session %q", failed, sessions)
	}
}

// TestCheckAbandonedMRTRGoSDK records the go-sdk everything-server
// (2026-07-28, stateless Streamable HTTP) called by two Go SDK clients:
// one, with the SDK's automatic retries turned off, calls
// test_input_required_result_elicitation twice, gets input_required
// answers and never retries; then the other calls the same tool with
// retries on and answers the elicitation, so its operation completes in
// two rounds. The abandoned cases count and name both calls of the first
// client (cases of its sessions, one per connection the recorder saw it
// use, not of the whole tape; its second call does not hide its first,
// nor does the other client's retry end either); a note unless selected.
func TestCheckAbandonedMRTRGoSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("real peers")
	}
	tp := recordGoMRTR(t, goMRTRCalls{retry: false, calls: 2}, goMRTRCalls{retry: true, calls: 1})
	if code, res := checkJSON(t, tp); code != 0 || res.Failures != 0 {
		t.Errorf("check: exit %d, %d failures; want abandoned a note", code, res.Failures)
	}
	code, res := checkJSON(t, tp, "--fail-on", "abandoned")
	if code != 1 || res.Failures == 0 {
		t.Fatalf("check --fail-on abandoned: exit %d, %d failures; want 1, the abandoned cases", code, res.Failures)
	}
	var count int64
	var details []string
	for _, c := range res.Cases {
		if !c.Failed() {
			continue
		}
		if c.Signal != check.SignalAbandoned || c.Session == "" {
			t.Errorf("case %+v, want an abandoned case of a session", c)
		}
		count += c.Count
		details = append(details, c.Details...)
	}
	if count != 2 || len(details) != 2 {
		t.Errorf("%d abandoned, details %q; want the first client's 2 calls", count, details)
	}
	for _, d := range details {
		if !strings.Contains(d, "tools/call id ") || !strings.HasSuffix(d, " "+mrtrTool) {
			t.Errorf("detail %q, want a call of %s", d, mrtrTool)
		}
	}
}

// TestCheckMRTRAcrossConnectionsGoSDK: the Go SDK client, on its own
// pooled HTTP transport, calls the go-sdk everything-server's
// test_input_required_result_elicitation ten times (2026-07-28,
// stateless) and retries each with the answer: the recorder makes a
// session of each connection, and a retry may go on another one than its
// first round. Every operation completed in two rounds: none is
// abandoned. (Keyed by connection, two or three of ten were, in every run
// seen.)
func TestCheckMRTRAcrossConnectionsGoSDK(t *testing.T) {
	if testing.Short() {
		t.Skip("real peers")
	}
	const calls = 10
	tp := recordGoMRTR(t, goMRTRCalls{retry: true, calls: calls})

	if m := inspectJSON(t, tp).Operations.MRTR; m.Operations != calls || m.Rounds != 2*calls || m.Abandoned != 0 {
		t.Errorf("inspect: MRTR %+v, want %d operations in %d rounds, none abandoned", m, calls, 2*calls)
	}
	if code, res := checkJSON(t, tp, "--fail-on", "abandoned"); code != 0 || res.Failures != 0 {
		t.Errorf("check --fail-on abandoned: exit %d, %d failures; want 0", code, res.Failures)
	}
}

// mrtrTool is the go-sdk everything-server's tool that asks for the
// caller's name in an MRTR round and answers "Hello, NAME!" to the retry.
const mrtrTool = "test_input_required_result_elicitation"

// goMRTRCalls is a Go SDK client's turn in recordGoMRTR: calls of
// mrtrTool, with the SDK's automatic MRTR retries (answering the
// elicitation) or without (keeping the input_required answer).
type goMRTRCalls struct {
	retry bool
	calls int
}

// recordGoMRTR records the go-sdk everything-server (2026-07-28, stateless
// Streamable HTTP) through mcptape record, called by a Go SDK client per
// turn in order, each on a pooled HTTP transport of its own, and returns
// the tape.
func recordGoMRTR(t *testing.T, turns ...goMRTRCalls) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	run := recordHTTP(t, peertest.GoEverythingHTTP(t, ctx, true))
	elicit := func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "tape"}}, nil
	}
	for _, turn := range turns {
		client := mcp.NewClient(&mcp.Implementation{Name: "check-test", Version: "1"},
			&mcp.ClientOptions{ElicitationHandler: elicit, MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: !turn.retry}})
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: run.url, HTTPClient: &http.Client{Transport: &http.Transport{}}}, nil)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		for range turn.calls {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mrtrTool})
			if err != nil {
				t.Fatalf("retry %v: %s: %v", turn.retry, mrtrTool, err)
			}
			if res.NeedsInput() == turn.retry {
				t.Fatalf("retry %v: the answer needs input: %v", turn.retry, res.NeedsInput())
			}
		}
		cs.Close()
	}
	if err := run.stop(); err != nil {
		t.Fatal(err)
	}
	return run.tape
}

// recordHTTP starts mcptape record in front of the HTTP server srv, to a
// tape in a temporary directory (run.tape).
func recordHTTP(t *testing.T, srv *peertest.Process) *httpRecordRun {
	t.Helper()
	return startHTTPRecord(t, "--listen", "127.0.0.1:0", "--upstream", srv.URL, "-o", filepath.Join(t.TempDir(), "run.jsonl.zst"))
}

// inspected is the part of inspect's JSON report these tests read.
type inspected struct {
	Unanswered analysis.UnansweredStats `json:"unanswered"`
	Operations analysis.OperationStats  `json:"operations"`
}

// inspectJSON runs mcptape inspect --format json on the tape tp and
// returns the part of its report the tests read.
func inspectJSON(t *testing.T, tp string) *inspected {
	t.Helper()
	code, out, stderr := runCLI(t, "", "inspect", "--format", "json", tp)
	var rep inspected
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
		t.Fatalf("inspect: exit %d (%v): %s", code, err, stderr)
	}
	return &rep
}

// checkJSON runs mcptape check --format json on the tape tp with args and
// returns its exit code and result.
func checkJSON(t *testing.T, tp string, args ...string) (int, check.Result) {
	t.Helper()
	code, out, stderr := runCLI(t, "", append([]string{"check", "--format", "json", tp}, args...)...)
	var res check.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("check: exit %d: %v\n%s\n%s", code, err, out, stderr)
	}
	return code, res
}

func ptr[T any](v T) *T { return &v }

// rawHTTPClient is a Streamable HTTP client written by the test, one
// session: it sends what it is told and answers nothing the server asks.
type rawHTTPClient struct {
	t            *testing.T
	ctx          context.Context
	url, version string
	session      string
	open         []*http.Response // answers whose streams are still open
}

// newRawHTTPClient initializes a session at url with protocol version and
// the client capabilities caps (a JSON object) and sends
// notifications/initialized.
func newRawHTTPClient(t *testing.T, ctx context.Context, url, version, caps string) *rawHTTPClient {
	t.Helper()
	c := &rawHTTPClient{t: t, ctx: ctx, url: url, version: version}
	t.Cleanup(c.closeStreams)
	resp := c.post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + version + `","capabilities":` + caps +
		`,"clientInfo":{"name":"check-test","version":"1"}}}`)
	c.session = resp.Header.Get("Mcp-Session-Id")
	if c.session == "" {
		t.Fatalf("initialize: no session id (%s)", resp.Status)
	}
	c.read(resp, `"id":0`)
	peertest.ReadAnswer(t, c.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	return c
}

// post sends body in the session.
func (c *rawHTTPClient) post(body string) *http.Response {
	c.t.Helper()
	req := peertest.PostRequest(c.t, c.url, c.session, c.version, body)
	if c.session == "" {
		req.Header.Del("MCP-Protocol-Version") // none before initialize
	}
	resp, err := http.DefaultClient.Do(req.WithContext(c.ctx))
	if err != nil {
		c.t.Fatalf("POST %.60s: %v", body, err)
	}
	if resp.StatusCode/100 != 2 {
		c.t.Fatalf("POST %.60s: %s: %s", body, resp.Status, peertest.ReadAnswer(c.t, resp))
	}
	return resp
}

// call posts the request body and returns the first message of its
// answer's event stream that contains until, leaving the stream open.
func (c *rawHTTPClient) call(body, until string) string {
	c.t.Helper()
	return c.read(c.post(body), until)
}

// read returns the first message of the event stream of resp that
// contains until; the stream stays open until end.
func (c *rawHTTPClient) read(resp *http.Response, until string) string {
	c.t.Helper()
	c.open = append(c.open, resp)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && strings.Contains(data, until) {
			return data
		}
	}
	c.t.Fatalf("the answer's stream ended (%v) before a message with %s", sc.Err(), until)
	return ""
}

// end deletes the session and closes the streams still open.
func (c *rawHTTPClient) end() {
	c.t.Helper()
	req, err := http.NewRequestWithContext(c.ctx, http.MethodDelete, c.url, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Mcp-Session-Id", c.session)
	req.Header.Set("MCP-Protocol-Version", c.version)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatalf("DELETE: %v", err)
	}
	peertest.ReadAnswer(c.t, resp)
	if resp.StatusCode/100 != 2 {
		c.t.Fatalf("DELETE: %s", resp.Status)
	}
	c.closeStreams()
}

func (c *rawHTTPClient) closeStreams() {
	for _, r := range c.open {
		r.Body.Close()
	}
	c.open = nil
}
