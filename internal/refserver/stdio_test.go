package refserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Frames of scripted stdio clients.
const (
	initFrame        = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"%s","capabilities":{%s},"clientInfo":{"name":"script","version":"1"}}}`
	initializedFrame = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
)

// script is the start of a scripted session at version with the given
// client capabilities (JSON members), followed by frames.
func script(version, caps string, frames ...string) []string {
	return append([]string{fmt.Sprintf(initFrame, version, caps), initializedFrame}, frames...)
}

// runScript feeds lines to ServeStdio, closing its input after the last one
// unless keepOpen, and returns the lines the server wrote until it returned,
// and how long it took. It fails the test if ServeStdio returns an error or
// does not return within limit.
func runScript(t *testing.T, lines []string, limit time.Duration) ([]string, time.Duration) {
	t.Helper()
	in := strings.NewReader(strings.Join(lines, "\n") + "\n")
	var out bytes.Buffer
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- ServeStdio(context.Background(), newServer(t), in, &out) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("ServeStdio: %v", err)
		}
	case <-time.After(limit):
		t.Fatalf("ServeStdio did not return within %v of its input's EOF", limit)
	}
	return strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n"), time.Since(start)
}

// wireFrame is a decoded server frame.
type wireFrame struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Progress float64 `json:"progress"`
	} `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code int `json:"code"`
	} `json:"error"`
}

func decodeFrames(t *testing.T, lines []string) []wireFrame {
	t.Helper()
	var fs []wireFrame
	for _, l := range lines {
		var f wireFrame
		if err := json.Unmarshal([]byte(l), &f); err != nil {
			t.Fatalf("server wrote a bad frame %q: %v", l, err)
		}
		fs = append(fs, f)
	}
	return fs
}

// TestStdioAnswersEverythingBeforeEOF checks that a client that sends its
// calls and closes its side at once gets every answer: the server drains
// before it stops, whatever the timing.
func TestStdioAnswersEverythingBeforeEOF(t *testing.T) {
	lines := script("2025-06-18", "",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":90,"steps":3},"_meta":{"progressToken":"p"}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}}}`,
		`{"jsonrpc":"2.0","id":"three","method":"ping"}`,
		`{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"`+ReadmeURI+`"}}`,
	)
	for range 3 { // the race it guards against is timing-dependent
		out, _ := runScript(t, lines, 5*time.Second)
		answered := map[string]bool{}
		progress := 0.0
		for _, f := range decodeFrames(t, out) {
			switch {
			case f.Method == "notifications/progress":
				if answered["1"] {
					t.Errorf("progress after the sleep's result")
				}
				if f.Params.Progress <= progress {
					t.Errorf("progress %v after %v", f.Params.Progress, progress)
				}
				progress = f.Params.Progress
			case f.Result != nil:
				answered[string(f.ID)] = true
			default:
				t.Errorf("unexpected frame %+v", f)
			}
		}
		for _, id := range []string{`"init"`, "1", "2", `"three"`, "4"} {
			if !answered[id] {
				t.Errorf("no answer to id %s in %q", id, out)
			}
		}
		if progress != 3 {
			t.Errorf("last progress %v, want 3", progress)
		}
	}
}

// TestStdioEOFStops checks that at EOF the server stops at once when no
// answer can come any more: a cancelled call, a call waiting for the client.
func TestStdioEOFStops(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		want  string // a frame the server must have written
	}{
		{"cancelled sleep", script("2025-11-25", "",
			`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}}`,
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`,
		), ""},
		{"ask waiting for the client", script("2025-11-25", `"elicitation":{}`,
			`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"ask","arguments":{"kind":"elicitation"}}}`,
		), `"method":"elicitation/create"`},
		{"nothing in flight", script("2024-11-05", ""), `"id":"init"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, took := runScript(t, tt.lines, 3*time.Second)
			if took > 2*time.Second {
				t.Errorf("took %v to stop", took)
			}
			if tt.want != "" && !strings.Contains(strings.Join(out, "\n"), tt.want) {
				t.Errorf("output %q lacks %s", out, tt.want)
			}
		})
	}
}

// TestStdioBatch checks that a 2025-03-26 batch is answered (as a batch)
// before the server stops at EOF.
func TestStdioBatch(t *testing.T) {
	out, _ := runScript(t, script("2025-03-26", "",
		`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":50}}},`+
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"b"}}}]`,
	), 5*time.Second)
	last := out[len(out)-1]
	var batch []wireFrame
	if err := json.Unmarshal([]byte(last), &batch); err != nil || len(batch) != 2 {
		t.Fatalf("last frame %q is not a batch of 2 answers (%v)", last, err)
	}
}

// TestServeStdioContext checks that ServeStdio returns nil at once when its
// context ends, even with a call running and the input still open.
func TestServeStdioContext(t *testing.T) {
	inR, inW := io.Pipe()
	defer inW.Close()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeStdio(ctx, newServer(t), inR, outW) }()
	go func() {
		for _, l := range script("2025-11-25", "",
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}}`) {
			fmt.Fprintln(inW, l)
		}
	}()
	sc := bufio.NewScanner(outR)
	if !sc.Scan() { // the initialize answer: the session runs
		t.Fatal("no initialize answer")
	}
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeStdio after cancel: %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("ServeStdio did not return within 2 s of its context's end")
	}
}

// TestServeStdioErrors checks that a failing input or output is an error.
func TestServeStdioErrors(t *testing.T) {
	boom := errors.New("boom")
	err := ServeStdio(context.Background(), newServer(t), io.MultiReader(strings.NewReader(script("2025-11-25", "")[0]+"\n"), errReader{boom}), io.Discard)
	if !errors.Is(err, boom) {
		t.Errorf("failing input: %v, want boom", err)
	}
	err = ServeStdio(context.Background(), newServer(t), strings.NewReader(script("2025-11-25", "")[0]+"\n"), errWriter{boom})
	if err == nil {
		t.Errorf("failing output: no error")
	}
}

// TestServeStdioEndsOnItsOwn checks that a session that ends by itself
// (a frame the SDK cannot decode, a failing output) makes ServeStdio
// return an error at once, even with the input still open or calls still
// pending, and that nothing is left running once the input closes.
func TestServeStdioEndsOnItsOwn(t *testing.T) {
	sleep := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":60000}}}`
	tests := []struct {
		name      string
		lines     []string // sent at once
		afterInit []string // sent once the initialize answer is out
		failOut   bool     // the output fails
		eof       bool     // close the input after the lines
	}{
		{name: "invalid JSON", lines: script("2025-11-25", "", "not json", sleep)},
		// The SDK rejects batches only once initialize is through.
		{name: "batch on 2025-11-25", lines: script("2025-11-25", ""), afterInit: []string{`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, sleep}},
		{name: "failing output, call pending at EOF", lines: script("2025-11-25", "", sleep), failOut: true, eof: true},
	}
	before := runtime.NumGoroutine()
	for _, tt := range tests {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		var out io.Writer = outW
		if tt.failOut {
			out = errWriter{errors.New("boom")}
		}
		initDone := make(chan struct{})
		go func() { // reads the output
			sc := bufio.NewScanner(outR)
			if sc.Scan() {
				close(initDone)
			}
			for sc.Scan() {
			}
		}()
		done := make(chan error, 1)
		go func() { done <- ServeStdio(context.Background(), newServer(t), inR, out) }()
		go func() { // writes the input
			write := func(lines []string) bool {
				for _, l := range lines {
					if _, err := fmt.Fprintln(inW, l); err != nil {
						return false
					}
				}
				return true
			}
			if !write(tt.lines) {
				return
			}
			if tt.afterInit != nil {
				<-initDone
				write(tt.afterInit)
			}
			if tt.eof {
				inW.Close()
			}
		}()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("%s: ServeStdio returned nil", tt.name)
			}
		case <-time.After(3 * time.Second):
			t.Fatalf("%s: ServeStdio did not return", tt.name)
		}
		inW.Close()
		outW.Close()
	}
	after := runtime.NumGoroutine()
	for deadline := time.Now().Add(3 * time.Second); after > before && time.Now().Before(deadline); after = runtime.NumGoroutine() {
		time.Sleep(10 * time.Millisecond)
	}
	if after > before {
		t.Errorf("%d goroutines before, %d after", before, after)
	}
}

// TestServeStdioClientGone checks that a client that closes both ends
// while a call is still sending (a progress notification every 100 ms)
// ends the session quietly: the server's next write fails because nobody
// reads any more, which is the client leaving, not an error.
func TestServeStdioClientGone(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- ServeStdio(context.Background(), newServer(t), inR, outW) }()
	go func() {
		for _, l := range script("2025-11-25", "", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":1},"name":"sleep","arguments":{"ms":60000,"steps":600}}}`) {
			fmt.Fprintln(inW, l)
		}
	}()
	sc := bufio.NewScanner(outR)
	for sc.Scan() && !strings.Contains(sc.Text(), `"notifications/progress"`) {
	}
	outR.Close()
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeStdio after the client left: %v, want nil", err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("ServeStdio did not return after the client left")
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

type errWriter struct{ err error }

func (w errWriter) Write([]byte) (int, error) { return 0, w.err }

// TestTracker checks the bookkeeping behind the drain at EOF.
func TestTracker(t *testing.T) {
	type step struct {
		frame      string
		fromClient bool
	}
	c := func(f string) step { return step{f, true} }
	s := func(f string) step { return step{f, false} }
	tests := []struct {
		name                     string
		steps                    []step
		clientCalls, serverCalls int
	}{
		{"call and answer", []step{c(`{"jsonrpc":"2.0","id":1,"method":"ping"}`), s(`{"jsonrpc":"2.0","id":1,"result":{}}`)}, 0, 0},
		{"call unanswered", []step{c(`{"id":1,"method":"ping","jsonrpc":"2.0"}`)}, 1, 0},
		{"ids keep their type", []step{c(`{"jsonrpc":"2.0","id":"1","method":"ping"}`), s(`{"jsonrpc":"2.0","id":1,"result":{}}`)}, 1, 0},
		{"1.0 is 1", []step{c(`{"jsonrpc":"2.0","id":1.0,"method":"ping"}`), s(`{"jsonrpc":"2.0","id":1,"result":{}}`)}, 0, 0},
		{"1.5 is 1, as in the SDK", []step{c(`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`), s(`{"jsonrpc":"2.0","id":1,"result":{}}`)}, 0, 0},
		{"2 is not 1", []step{c(`{"jsonrpc":"2.0","id":2,"method":"ping"}`), s(`{"jsonrpc":"2.0","id":1,"result":{}}`)}, 1, 0},
		{"escaped string id", []step{c(`{"jsonrpc":"2.0","id":"a\"b","method":"ping"}`), s(`{"jsonrpc":"2.0","id":"a\"b","error":{"code":1,"message":"m"}}`)}, 0, 0},
		{"notification", []step{c(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)}, 0, 0},
		{"cancelled", []step{c(`{"jsonrpc":"2.0","id":5,"method":"tools/call"}`), c(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}`)}, 0, 0},
		{"cancel of another id", []step{c(`{"jsonrpc":"2.0","id":5,"method":"tools/call"}`), c(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":6}}`)}, 1, 0},
		{"batch", []step{c(`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":2,"method":"b"},{"jsonrpc":"2.0","method":"n"}]`), s(`[{"jsonrpc":"2.0","id":2,"result":{}}]`)}, 1, 0},
		{"server call", []step{s(`{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{}}`)}, 0, 1},
		{"server call answered", []step{s(`{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{}}`), c(`{"jsonrpc":"2.0","id":1,"result":{"action":"decline"}}`)}, 0, 0},
		{"server cancels its call", []step{s(`{"jsonrpc":"2.0","id":1,"method":"sampling/createMessage"}`), s(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)}, 0, 0},
		{"array params", []step{c(`{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}`)}, 1, 0},
		{"null id", []step{c(`{"jsonrpc":"2.0","id":null,"method":"x"}`)}, 0, 0},
		{"invalid JSON", []step{c(`{"jsonrpc":"2.0","id":1,`)}, 0, 0},
		{"answer to nothing", []step{s(`{"jsonrpc":"2.0","id":3,"result":{}}`)}, 0, 0},
	}
	for _, tt := range tests {
		tr := newTracker()
		for _, st := range tt.steps {
			tr.note([]byte(st.frame+"\n"), st.fromClient)
		}
		if len(tr.clientCalls) != tt.clientCalls || len(tr.serverCalls) != tt.serverCalls {
			t.Errorf("%s: %d client and %d server calls open, want %d and %d",
				tt.name, len(tr.clientCalls), len(tr.serverCalls), tt.clientCalls, tt.serverCalls)
		}
	}
}

// TestPeekServerFrame checks the fast reading of the SDK's frames.
func TestPeekServerFrame(t *testing.T) {
	tests := []struct {
		frame     string
		ok        bool
		id        string
		hasMethod bool
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, true, "1", false},
		{`{"jsonrpc":"2.0","id":"x\"y","error":{"code":1,"message":"m"}}`, true, `"x\"y"`, false},
		{`{"jsonrpc":"2.0","id":-2,"method":"elicitation/create","params":{}}`, true, "-2", true},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`, true, "", true},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, false, "", false},
		{`{"jsonrpc":"2.0","id":null,"error":{}}`, false, "", false},
		{`{"id":1,"jsonrpc":"2.0","result":{}}`, false, "", false},
		{`{"jsonrpc":"2.0","id":1}`, false, "", false},
		{`{"jsonrpc":"2.0","id":"unterminated`, false, "", false},
		{`[{"jsonrpc":"2.0","id":1,"result":{}}]`, false, "", false},
	}
	for _, tt := range tests {
		m, ok := peekServerFrame([]byte(tt.frame))
		if ok != tt.ok || (ok && (string(m.ID) != tt.id || (m.Method != nil) != tt.hasMethod)) {
			t.Errorf("peekServerFrame(%s) = id %s, method %v, %v; want id %s, method %v, %v",
				tt.frame, m.ID, m.Method != nil, ok, tt.id, tt.hasMethod, tt.ok)
		}
	}
}

// FuzzPeekServerFrame checks that the fast reading of frames written by the
// SDK's encoder agrees with what was encoded.
func FuzzPeekServerFrame(f *testing.F) {
	f.Add("a", int64(1), false, uint8(0), "tools/call", `{"x":1}`)
	f.Add("a\"b\\", int64(-7), true, uint8(1), "", `{}`)
	f.Add("", int64(1<<53), false, uint8(2), "notifications/progress", `[1]`)
	f.Add("é\u2028", int64(0), true, uint8(3), "notifications/cancelled", `{"requestId":"a"}`)
	f.Fuzz(func(t *testing.T, sid string, nid int64, strID bool, kind uint8, method, payload string) {
		if !json.Valid([]byte(payload)) {
			payload = "{}"
		}
		var rawID any = float64(nid)
		if strID {
			rawID = sid
		}
		id, err := jsonrpc.MakeID(rawID)
		if err != nil {
			t.Skip()
		}
		var msg jsonrpc.Message
		wantMethod := true
		switch kind % 4 {
		case 0: // call
			msg = &jsonrpc.Request{ID: id, Method: method, Params: json.RawMessage(payload)}
		case 1: // answer
			msg, wantMethod = &jsonrpc.Response{ID: id, Result: json.RawMessage(payload)}, false
		case 2: // error answer
			msg, wantMethod = &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: 1, Message: payload}}, false
		default: // notification
			msg, id = &jsonrpc.Request{Method: method, Params: json.RawMessage(payload)}, jsonrpc.ID{}
		}
		b, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			t.Skip()
		}
		m, ok := peekServerFrame(b)
		if !ok {
			if wantMethod && (method == "" || method == "notifications/cancelled") {
				return // left to the full decoder on purpose
			}
			t.Fatalf("peekServerFrame(%s): not read", b)
		}
		var full wireMsg
		if err := unmarshalTolerant(b, &full); err != nil {
			t.Fatalf("SDK frame %s does not decode: %v", b, err)
		}
		pk, pok := idKey(m.ID)
		fk, fok := idKey(full.ID)
		if pk != fk || pok != fok || (m.Method != nil) != (full.Method != nil) {
			t.Errorf("%s: peek says id %q (%v) method %v; full decode says id %q (%v) method %v",
				b, pk, pok, m.Method != nil, fk, fok, full.Method != nil)
		}
	})
}

// FuzzTrackerNote checks that no frame, from either side, makes the tracker
// panic.
func FuzzTrackerNote(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":"a\\\"b","method":"x","params":{}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"a"},{"id":2}]`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"z"}}`,
		`{"jsonrpc":"2.0","id":`,
		"\xff\x00[",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tr := newTracker()
		tr.note([]byte(`{"jsonrpc":"2.0","id":1,"method":"a"}`), true)
		tr.note([]byte(`{"jsonrpc":"2.0","id":1,"method":"b"}`), false)
		tr.note(b, true)
		tr.note(b, false)
		tr.note(b, true)
	})
}
