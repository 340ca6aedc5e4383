package mock

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/tapetest"
	"github.com/mcptape/mcptape/tape"
)

// TestMockDropHTTP: over Streamable HTTP a dropped request's stream ends,
// with no answer on it, instead of staying open until the client leaves;
// the rest of the session is served as before.
func TestMockDropHTTP(t *testing.T) {
	m := newMock(t, []string{
		"> " + batchInit, "< " + batchInitResp,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`,
	}, WithFaults(Faults{DropRate: 1, Seed: 1}))
	ms := httptest.NewServer(m.HTTPHandler(HTTPConfig{Stateless: true}))
	defer ms.Close()
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`,
		`[{"jsonrpc":"2.0","id":8,"method":"tools/list"}]`,
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ms.URL+Path, strings.NewReader(body))
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		if err != nil {
			t.Fatalf("%s: the stream of a dropped request did not end: %v", body, err)
		}
		if resp.StatusCode != http.StatusOK || strings.Contains(string(data), "data:") {
			t.Errorf("%s: status %d, body %q; want 200 and no message", body, resp.StatusCode, data)
		}
	}
}

// TestMockEmptyBatchHTTP: an empty batch POSTed gets 400 and one Invalid
// Request error (not 202 and nothing), with a session or without.
func TestMockEmptyBatchHTTP(t *testing.T) {
	m := newMock(t, []string{"> " + batchInit, "< " + batchInitResp})
	for _, cfg := range []HTTPConfig{{}, {Stateless: true}} {
		ms := httptest.NewServer(m.HTTPHandler(cfg))
		resp := postMCP(t, t.Context(), ms.URL+Path, `[]`, "")
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		ms.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: empty batch"}}`
		if resp.StatusCode != http.StatusBadRequest || strings.TrimSpace(string(data)) != want {
			t.Errorf("stateless %v: status %d, body %q; want 400 %s", cfg.Stateless, resp.StatusCode, data, want)
		}
	}
}

// TestMockHTTPDirectAnswersRecorded: the answers the HTTP handler gives
// itself (unparseable input, an empty batch, a POST of an unknown or
// missing session) are in the -o tape, with what they answer, as the
// answers of the sessions are: a message each way, under the session the
// POST names when the mock serves it, else one of its own.
func TestMockHTTPDirectAnswersRecorded(t *testing.T) {
	w, path := outTape(t)
	m := newMock(t, []string{"> " + batchInit, "< " + batchInitResp}, WithTape(w))
	ms := httptest.NewServer(m.HTTPHandler(HTTPConfig{}))
	defer ms.Close()
	post := func(body, session string) (int, string) {
		resp := postMCP(t, t.Context(), ms.URL+Path, body, session)
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if sid := resp.Header.Get(sessionHeader); sid != "" {
			return resp.StatusCode, sid
		}
		return resp.StatusCode, string(data)
	}
	_, sid := post(batchInit, "")
	tests := []struct {
		body, session string
		status        int
		answer        string // a substring of the answer
		own           bool   // recorded in the initialized session
	}{
		{`{"jsonrpc":`, sid, http.StatusBadRequest, `"code":-32700`, true},
		{`[]`, sid, http.StatusBadRequest, `empty batch`, true},
		{`[]`, "", http.StatusBadRequest, `empty batch`, false},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, "", http.StatusBadRequest, `missing Mcp-Session-Id`, false},
		{`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, "gone", http.StatusNotFound, `unknown or ended session`, false},
	}
	for _, tt := range tests {
		if st, body := post(tt.body, tt.session); st != tt.status || !strings.Contains(body, tt.answer) {
			t.Fatalf("%s: %d %s, want %d %s", tt.body, st, body, tt.status, tt.answer)
		}
	}
	ms.Close()
	recs := closeAndReadMessages(t, w, path)
	if len(recs) != 2+2*len(tests) {
		t.Fatalf("%d messages in the tape, want %d", len(recs), 2+2*len(tests))
	}
	initSession := recs[0].Session
	others := map[string]bool{}
	for i, tt := range tests {
		in, out := recs[2+2*i], recs[3+2*i]
		if in.Dir != tape.ClientToServer || string(in.Frame) != tt.body || in.Exchange == 0 {
			t.Errorf("%s: recorded %s %q (exchange %d)", tt.body, in.Dir, in.Frame, in.Exchange)
		}
		if out.Dir != tape.ServerToClient || !strings.Contains(string(out.Frame), tt.answer) {
			t.Errorf("%s: answer recorded %s %s", tt.body, out.Dir, out.Frame)
		}
		if in.Session != out.Session || (in.Session == initSession) != tt.own || others[in.Session] {
			t.Errorf("%s: recorded in sessions %q and %q (initialized: %q)", tt.body, in.Session, out.Session, initSession)
		}
		if !tt.own {
			others[in.Session] = true
		}
	}
}

// TestMockSSEParseErrorRecorded: over legacy HTTP+SSE, an unparseable
// POST and the parse error the handler answers it with are in the -o
// tape, in the session of the stream, as a request and its answer after
// them are.
func TestMockSSEParseErrorRecorded(t *testing.T) {
	w, path := outTape(t)
	m := newMock(t, []string{"> " + batchInit, "< " + batchInitResp}, WithTape(w))
	ms := httptest.NewServer(m.SSEHandler())
	defer ms.Close()
	resp, err := http.Get(ms.URL + "/sse")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close() // before the server's Close, which waits for the stream
	br := bufio.NewReader(resp.Body)
	var endpoint string
	for endpoint == "" {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
			endpoint = d
		}
	}
	for _, body := range []string{`{"jsonrpc":`, batchInit} {
		r := postMCP(t, t.Context(), ms.URL+endpoint, body, "")
		io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	for line := ""; !strings.Contains(line, `"id":1`); { // the answer to initialize
		if line, err = br.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	resp.Body.Close()
	ms.Close()
	recs := closeAndReadMessages(t, w, path)
	var got []string
	for _, r := range recs {
		if r.Session != recs[0].Session {
			t.Errorf("%s recorded in session %q, the stream's is %q", r.Frame, r.Session, recs[0].Session)
		}
		got = append(got, string(r.Dir)+" "+string(r.Frame))
	}
	want := []string{"c2s " + `{"jsonrpc":`, "s2c " + `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`, "c2s " + batchInit}
	if len(got) < 4 || !slices.Equal(got[:3], want) {
		t.Errorf("tape:\n%s\nwant it to begin with\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// outTape creates an output tape in the test's directory.
func outTape(t *testing.T) (*tape.Writer, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out.jsonl.zst")
	w, err := tape.Create(path, tape.Header{Tool: "mcptape", Transport: "http"})
	if err != nil {
		t.Fatal(err)
	}
	return w, path
}

// closeAndReadMessages closes w, the writer of the tape at path, and
// returns the tape's message records.
func closeAndReadMessages(t *testing.T, w *tape.Writer, path string) []*tape.Record {
	t.Helper()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, recs := tapetest.Read(t, path, tape.TypeMessage)
	return recs
}
