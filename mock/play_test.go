package mock

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// serverTape records a tool that asks the client (sampling) and then
// announces a tools/list_changed after its answer, and a task polled
// twice.
var serverTape = []string{
	`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask","arguments":{}}}`,
	`< {"jsonrpc":"2.0","id":"s-7","method":"sampling/createMessage","params":{"messages":[]}}`,
	`> {"jsonrpc":"2.0","id":"s-7","result":{"role":"assistant","content":{"type":"text","text":"x"},"model":"m"}}`,
	`< {"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"asked"}]}}`,
	`< {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
	`> {"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"t1"}}`,
	`< {"jsonrpc":"2.0","id":2,"result":{"taskId":"t1","status":"working"}}`,
	`> {"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"taskId":"t1"}}`,
	`< {"jsonrpc":"2.0","id":3,"result":{"taskId":"t1","status":"completed"}}`,
}

// TestMockServerRequest checks that a server request goes out under a
// fresh id, that its answer is awaited before the answer to the call, and
// that a notification recorded after the answer follows it.
func TestMockServerRequest(t *testing.T) {
	m := newMock(t, serverTape)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	errc := make(chan error, 1)
	go func() { errc <- m.ServeStdio(ctx, inR, outW); outW.Close() }()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func() string {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the mock said nothing more")
			}
			return l
		case <-time.After(5 * time.Second):
			t.Fatal("the mock said nothing for 5s")
		}
		return ""
	}
	io.WriteString(inW, `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"ask","arguments":{}}}`+"\n")
	if got, want := next(), `{"jsonrpc":"2.0","id":"mcptape-mock-1","method":"sampling/createMessage","params":{"messages":[]}}`; got != want {
		t.Fatalf("server request %s, want %s", got, want)
	}
	select { // the answer to the call waits for ours
	case l := <-lines:
		t.Fatalf("before the client answered: %s", l)
	case <-time.After(50 * time.Millisecond):
	}
	io.WriteString(inW, `{"jsonrpc":"2.0","id":"mcptape-mock-1","result":{}}`+"\n")
	if got, want := next(), `{"jsonrpc":"2.0","id":10,"result":{"content":[{"type":"text","text":"asked"}]}}`; got != want {
		t.Fatalf("answer %s, want %s", got, want)
	}
	if got, want := next(), `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`; got != want {
		t.Fatalf("after the answer %s, want %s", got, want)
	}
	// Polled three times, recorded twice: the last answer repeats.
	for i, want := range []string{"working", "completed", "completed"} {
		io.WriteString(inW, `{"jsonrpc":"2.0","id":2`+string(rune('0'+i))+`,"method":"tasks/get","params":{"taskId":"t1"}}`+"\n")
		if got := next(); !strings.Contains(got, `"status":"`+want+`"`) {
			t.Errorf("poll %d: %s, want status %s", i, got, want)
		}
	}
	inW.Close()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

// TestMockTiming checks that the recorded latency is kept by default and
// divided by --speed: an answer never comes before its (scaled) time.
func TestMockTiming(t *testing.T) {
	slow := []string{
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`,
	}
	for range 150 { // 150 ms between the request and its answer
		slow = append(slow, `< {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"debug","data":"tick"}}`)
	}
	slow = append(slow, `< {"jsonrpc":"2.0","id":1,"result":{}}`)
	req := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`
	tests := []struct {
		speed   Option
		atLeast time.Duration
	}{
		{WithSpeed(1), 150 * time.Millisecond},
		{WithSpeed(3), 50 * time.Millisecond},
	}
	for _, tt := range tests {
		m, err := New(loadSessionsOf(t, slow), tt.speed)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		out := converse(t, m, req)
		if took := time.Since(start); took < tt.atLeast {
			t.Errorf("answered after %v, want at least %v", took, tt.atLeast)
		}
		if len(out) != 151 {
			t.Errorf("%d messages, want 150 logs and the answer", len(out))
		}
	}
}

// TestMockFaultDropAndDelay checks --drop-rate 1 (no answer until the
// client cancels) and --delay.
func TestMockFaultDropAndDelay(t *testing.T) {
	m := newMock(t, baseTape, WithFaults(Faults{DropRate: 1}))
	out := converse(t, m, rollN(1), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	if len(out) != 0 {
		t.Errorf("a dropped request was answered: %q", out)
	}
	if r := m.Report(); r.Dropped != 1 {
		t.Errorf("dropped %d, want 1", r.Dropped)
	}
	m = newMock(t, baseTape, WithFaults(Faults{Delay: 100 * time.Millisecond}))
	start := time.Now()
	out = converse(t, m, rollN(1))
	if took := time.Since(start); took < 100*time.Millisecond || len(out) != 1 {
		t.Errorf("answered %q after %v, want one answer after at least 100ms", out, took)
	}
}

// TestMockHTTPSessions checks the Streamable HTTP session rules.
func TestMockHTTPSessions(t *testing.T) {
	m := newMock(t, baseTape)
	srv := httptest.NewServer(m.HTTPHandler(HTTPConfig{}))
	defer srv.Close()
	post := func(body string, h map[string]string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+Path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	tests := []struct {
		name   string
		body   string
		header map[string]string
		status int
		want   string
	}{
		{"initialize makes a session", initReq, nil, 200, `"serverInfo"`},
		{"no session", rollN(1), nil, 400, "missing Mcp-Session-Id"},
		{"unknown session", rollN(1), map[string]string{sessionHeader: "nope"}, 404, "unknown or ended session"},
		{"garbage", "{not json", nil, 400, `"code":-32700`},
		{"other origin", initReq, map[string]string{"Origin": "https://evil.example"}, 403, "Origin"},
		{"2026-07-28 without a session, 2025 recording", rollN(1), map[string]string{"MCP-Protocol-Version": "2026-07-28"}, 400, "missing Mcp-Session-Id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := post(tt.body, tt.header)
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status || !strings.Contains(string(b), tt.want) {
				t.Errorf("status %d body %q, want %d with %q", resp.StatusCode, b, tt.status, tt.want)
			}
			if tt.name == "initialize makes a session" && resp.Header.Get(sessionHeader) == "" {
				t.Error("no Mcp-Session-Id on the initialize answer")
			}
		})
	}
	// A 2026-07-28 recording (no initialize) serves such a POST without a
	// session.
	modern := httptest.NewServer(newMock(t, baseTape[3:]).HTTPHandler(HTTPConfig{}))
	defer modern.Close()
	req, _ := http.NewRequest(http.MethodPost, modern.URL+Path, strings.NewReader(rollN(1)))
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"text":"3"`) {
		t.Errorf("2026-07-28 POST to a 2026-07-28 recording: %d %s", resp.StatusCode, b)
	}
	stateless := httptest.NewServer(newMock(t, baseTape).HTTPHandler(HTTPConfig{Stateless: true}))
	defer stateless.Close()
	resp, err = http.Get(stateless.URL + Path)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("stateless GET: %d, want 405", resp.StatusCode)
	}
}

// TestMockHTTPDisconnectAfter checks that the HTTP server stops after N
// answers, with ErrDisconnected.
func TestMockHTTPDisconnectAfter(t *testing.T) {
	m := newMock(t, baseTape, WithFaults(Faults{DisconnectAfter: 1}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- m.ServeHTTP(t.Context(), ln, HTTPConfig{Stateless: true}) }()
	resp, err := http.Post("http://"+ln.Addr().String()+Path, "application/json", strings.NewReader(rollN(1)))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrDisconnected) {
			t.Errorf("ServeHTTP: %v, want ErrDisconnected", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server went on after its last answer")
	}
}

// tailTape answers a call, then announces two changes: the tail, played
// in the background after the answer.
var tailTape = []string{
	`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","arguments":{}}}`,
	`< {"jsonrpc":"2.0","id":1,"result":{}}`,
	`< {"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
	`< {"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`,
}

// TestMockTailAtEndOfInput checks what a stdio run whose input ends right
// after a call sends of the call's tail: at --speed max all of it, every
// time (ServeStdio returned while the tail's goroutine was still writing:
// 41 of 200 runs lacked it under -race with GOMAXPROCS 2); when the tail
// is not due yet, ServeStdio returns without waiting for it and nothing
// is written after it returned.
func TestMockTailAtEndOfInput(t *testing.T) {
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a","arguments":{}}}`
	want := []string{`{"jsonrpc":"2.0","id":7,"result":{}}`, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`,
		`{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`}
	for i := range 100 {
		if got := converse(t, newMock(t, tailTape), call); !reflect.DeepEqual(got, want) {
			t.Fatalf("run %d: %q, want the answer and its tail %q", i, got, want)
		}
	}

	// 1 ms recorded is 100 ms live: the answer comes 100 ms in, the tail
	// 100 ms later, after the input ended.
	m, err := New(loadSessionsOf(t, tailTape), WithSpeed(0.01))
	if err != nil {
		t.Fatal(err)
	}
	out := &afterReturn{}
	start := time.Now()
	if err := m.ServeStdio(t.Context(), strings.NewReader(call+"\n"), out); err != nil {
		t.Fatal(err)
	}
	out.returned()
	time.Sleep(time.Until(start.Add(500 * time.Millisecond))) // past the tail's time: nothing may come
	if got, late := out.get(); !strings.HasPrefix(got, want[0]+"\n") || late != "" {
		t.Errorf("wrote %q, then after ServeStdio returned %q: want the answer, nothing after the return", got, late)
	}
}

// afterReturn is a writer that keeps apart what was written after
// returned was called.
type afterReturn struct {
	mu         sync.Mutex
	done       bool
	before, at strings.Builder
}

func (w *afterReturn) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return w.at.Write(p)
	}
	return w.before.Write(p)
}

func (w *afterReturn) returned() {
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
}

func (w *afterReturn) get() (before, after string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.before.String(), w.at.String()
}
