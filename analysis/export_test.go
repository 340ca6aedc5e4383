package analysis

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/capture"
	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/tape"
)

// export runs Export into a buffer.
func export(t *testing.T, path string, f ExportFormat) ([]byte, ExportStats) {
	t.Helper()
	var buf bytes.Buffer
	st, err := Export(context.Background(), path, &buf, f)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), st
}

func TestExportNDJSON(t *testing.T) {
	path := fixtureTape(t, "export/stdio.jsonl.zst", append(diffRecorded(),
		c2s(40*tick, `[{"jsonrpc":"2.0","id":7,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}]`),
		s2c(41*tick, `[{"jsonrpc":"2.0","id":7,"result":{}}]`),
		c2s(42*tick, "not json \xff"),
	))
	out, st := export(t, path, ExportNDJSON)
	golden(t, "export/stdio.ndjson", out)
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	// 10 messages, a batch of 2 (array + members), a batch of 1, a bad frame.
	if want := 10 + 3 + 2 + 1; len(lines) != want || st.Messages != int64(want) {
		t.Fatalf("%d lines, %d messages; want %d", len(lines), st.Messages, want)
	}
	for i, l := range lines {
		var v struct {
			Type      string          `json:"type"`
			Message   json.RawMessage `json:"message"`
			B64       string          `json:"b64"`
			LatencyNS *int64          `json:"latency_ns"`
			Method    string          `json:"method"`
		}
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if v.Type != "message" || (v.Message == nil && v.B64 == "") {
			t.Errorf("line %d is not a message with its frame: %s", i+1, l)
		}
	}
	if !strings.Contains(lines[7], `"name":"sleep"`) || !strings.Contains(lines[7], `"latency_ns":12000000`) {
		t.Errorf("response not paired with its request: %s", lines[7])
	}
}

// httpRec is one record of a hand-made HTTP tape.
func httpRec(at time.Duration, x uint64, dir tape.Direction, frame string) tape.Record {
	return tape.Record{Type: tape.TypeMessage, Time: testStart.Add(at).UnixNano(), Session: "sess-1", Dir: dir,
		Frame: []byte(frame), Exchange: x, Stream: "post"}
}

func httpEvt(at time.Duration, x uint64, name, data string) tape.Record {
	return tape.Record{Type: tape.TypeEvent, Time: testStart.Add(at).UnixNano(), Session: "sess-1", Event: name,
		Data: []byte(data), Exchange: x, Stream: "post"}
}

// handMadeHTTP is an HTTP tape as capture writes it: an initialize answered
// with JSON, a tool call answered on an SSE stream with progress, a batch,
// a 202 notification, a failed request and an exchange the tape ends in.
func handMadeHTTP() []tape.Record {
	hdr := `"request_headers":{"Content-Type":["application/json"],"Accept":["application/json, text/event-stream"],"Mcp-Session-Id":["sess-1"]}`
	return []tape.Record{
		httpRec(1*tick, 1, tape.ClientToServer, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"cli","version":"1"}}}`),
		httpEvt(3*tick, 1, tape.EventHTTP, `{"phase":"response","method":"POST","path":"/mcp","host":"127.0.0.1:9000","conn":1,"status":200,"content_type":"application/json","request_headers":{"Content-Type":["application/json"]},"response_headers":{"Content-Type":["application/json"],"Mcp-Session-Id":["sess-1"]},"wait_ns":2000000}`),
		httpRec(3*tick, 1, tape.ServerToClient, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"srv","version":"2"}}}`),
		httpEvt(4*tick, 1, tape.EventHTTP, `{"phase":"end","method":"POST","path":"/mcp","conn":1,"status":200,"duration_ns":3000000,"closed_by":"server","request_bytes":150,"response_bytes":140,"messages":1}`),
		httpRec(10*tick, 2, tape.ClientToServer, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":20},"_meta":{"progressToken":1}}}`),
		httpEvt(11*tick, 2, tape.EventHTTP, `{"phase":"response","method":"POST","path":"/mcp?debug=1","host":"127.0.0.1:9000","conn":1,"status":200,"content_type":"text/event-stream",`+hdr+`,"response_headers":{"Content-Type":["text/event-stream"]},"wait_ns":1000000}`),
		httpEvt(11*tick, 2, "sse", `{"kind":"priming","id":"ev-0"}`),
		httpRec(20*tick, 2, tape.ServerToClient, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}`),
		httpRec(31*tick, 2, tape.ServerToClient, `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"slept"}]}}`),
		httpEvt(32*tick, 2, tape.EventHTTP, `{"phase":"end","method":"POST","path":"/mcp?debug=1","conn":1,"status":200,"duration_ns":22000000,"closed_by":"server","events":3,"messages":2}`),
		httpRec(40*tick, 3, tape.ClientToServer, `{"jsonrpc":"2.0","id":2,"method":"ping"}`),
		httpRec(40*tick, 3, tape.ClientToServer, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`),
		httpEvt(41*tick, 3, tape.EventHTTP, `{"phase":"response","method":"POST","path":"/mcp","conn":1,"status":200,"content_type":"application/json",`+hdr+`,"wait_ns":1000000}`),
		httpRec(42*tick, 3, tape.ServerToClient, `{"jsonrpc":"2.0","id":2,"result":{}}`),
		httpRec(42*tick, 3, tape.ServerToClient, `{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}`),
		httpEvt(42*tick, 3, tape.EventHTTP, `{"phase":"end","method":"POST","path":"/mcp","conn":1,"status":200,"duration_ns":2000000,"closed_by":"server","batch":2,"messages":2}`),
		httpRec(50*tick, 4, tape.ClientToServer, `{"jsonrpc":"2.0","method":"notifications/initialized"}`),
		httpEvt(51*tick, 4, tape.EventHTTP, `{"phase":"response","method":"POST","path":"/mcp","conn":1,"status":202,`+hdr+`,"wait_ns":1000000}`),
		httpEvt(51*tick, 4, tape.EventHTTP, `{"phase":"end","method":"POST","path":"/mcp","conn":1,"status":202,"duration_ns":1000000,"closed_by":"server"}`),
		httpEvt(60*tick, 5, tape.EventError, `{"error":"dial tcp 127.0.0.1:9001: connection refused"}`),
		httpEvt(60*tick, 5, tape.EventHTTP, `{"phase":"end","method":"DELETE","path":"/mcp","host":"127.0.0.1:9000","conn":2,"status":502,"duration_ns":500000,"closed_by":"proxy","error":"upstream unreachable",`+hdr+`,"body":"Bad Gateway"}`),
		httpEvt(70*tick, 6, tape.EventHTTP, `{"phase":"response","method":"GET","path":"/mcp","conn":1,"status":200,"content_type":"text/event-stream",`+hdr+`,"wait_ns":1000000}`),
		httpRec(75*tick, 6, tape.ServerToClient, "{\"jsonrpc\":\"2.0\",\n\"method\":\"notifications/tools/list_changed\"}"),
	}
}

// writeRecords writes records as a tape with the fixed test start.
func writeRecords(t *testing.T, path, transport string, recs []tape.Record) {
	t.Helper()
	end := testStart.Add(time.Second)
	w, err := tape.Create(path, tape.Header{Version: "test", Time: testStart.UnixNano(), Transport: transport, Target: "http://127.0.0.1:9001/mcp"},
		tape.WithClock(func() time.Time { return end }), tape.WithFlushInterval(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestExportHAR(t *testing.T) {
	dir := t.TempDir()
	if *writeFixtures {
		dir = filepath.Join(goldenDir, "export")
	}
	path := filepath.Join(dir, "http.jsonl.zst")
	writeRecords(t, path, "http", handMadeHTTP())
	if !*writeFixtures {
		sameAsCommitted(t, path, filepath.Join(goldenDir, "export", "http.jsonl.zst"))
	}
	out, st := export(t, path, ExportHAR)
	golden(t, "export/http.har", out)
	entries := validateHAR(t, out)
	if st.Entries != 6 || len(entries) != 6 {
		t.Fatalf("%d entries (stats %d), want one per exchange: 6", len(entries), st.Entries)
	}
	checks := []struct {
		entry int
		path  string
		want  string
	}{
		{0, "request.url", "http://127.0.0.1:9000/mcp"},
		{0, "timings.wait", "2"},
		{0, "time", "3"},
		{1, "response.content.text", "id: ev-0\ndata: \n\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"slept\"}]}}\n\n"},
		{1, "request.queryString", `[{"name":"debug","value":"1"}]`},
		{1, "timings.receive", "21"},
		{2, "request.postData.text", `[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"tools/list"}]`},
		{2, "response.content.text", `[{"jsonrpc":"2.0","id":2,"result":{}},{"jsonrpc":"2.0","id":3,"result":{"tools":[]}}]`},
		{3, "response.status", "202"},
		{3, "response.statusText", "Accepted"},
		{4, "response.content.text", "Bad Gateway"},
		{4, "_error", "upstream unreachable"},
		{4, "request.method", "DELETE"},
		{5, "_incomplete", "true"},
		{5, "response.content.text", "data: {\"jsonrpc\":\"2.0\",\ndata: \"method\":\"notifications/tools/list_changed\"}\n\n"},
	}
	for _, c := range checks {
		if got := harField(entries[c.entry], c.path); got != c.want {
			t.Errorf("entry %d %s = %q, want %q", c.entry, c.path, got, c.want)
		}
	}
}

// harField returns a field of an entry by dotted path: strings as is,
// anything else as JSON.
func harField(v any, path string) string {
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return "<missing>"
		}
		v = m[k]
	}
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// validateHAR checks the fields HAR 1.2 requires and returns the entries.
func validateHAR(t *testing.T, data []byte) []any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("HAR is not JSON: %v", err)
	}
	need := func(where string, obj any, fields ...string) map[string]any {
		m, ok := obj.(map[string]any)
		if !ok {
			t.Fatalf("%s is not an object", where)
		}
		for _, f := range fields {
			name, typ, _ := strings.Cut(f, ":")
			v, ok := m[name]
			if !ok {
				t.Errorf("%s lacks %q", where, name)
				continue
			}
			var good bool
			switch typ {
			case "s":
				_, good = v.(string)
			case "n":
				_, good = v.(float64)
			case "o":
				_, good = v.(map[string]any)
			case "a":
				_, good = v.([]any)
			}
			if !good {
				t.Errorf("%s.%s has the wrong type: %v", where, name, v)
			}
		}
		return m
	}
	log := need("har", doc, "log:o")["log"]
	lm := need("log", log, "version:s", "creator:o", "entries:a")
	if lm["version"] != "1.2" {
		t.Errorf("version %v", lm["version"])
	}
	need("creator", lm["creator"], "name:s", "version:s")
	entries, _ := lm["entries"].([]any)
	for i, e := range entries {
		w := fmt.Sprintf("entries[%d]", i)
		em := need(w, e, "startedDateTime:s", "time:n", "request:o", "response:o", "cache:o", "timings:o")
		if _, err := time.Parse(time.RFC3339Nano, em["startedDateTime"].(string)); err != nil {
			t.Errorf("%s.startedDateTime: %v", w, err)
		}
		req := need(w+".request", em["request"], "method:s", "url:s", "httpVersion:s", "cookies:a", "headers:a", "queryString:a", "headersSize:n", "bodySize:n")
		if pd, ok := req["postData"]; ok {
			need(w+".request.postData", pd, "mimeType:s", "text:s")
		}
		for _, hd := range append(req["headers"].([]any), req["queryString"].([]any)...) {
			need(w+".request header", hd, "name:s", "value:s")
		}
		resp := need(w+".response", em["response"], "status:n", "statusText:s", "httpVersion:s", "cookies:a", "headers:a", "content:o", "redirectURL:s", "headersSize:n", "bodySize:n")
		need(w+".response.content", resp["content"], "size:n", "mimeType:s")
		tm := need(w+".timings", em["timings"], "send:n", "wait:n", "receive:n")
		sum := 0.0
		for _, k := range []string{"send", "wait", "receive"} {
			v := tm[k].(float64)
			if v < -1 {
				t.Errorf("%s.timings.%s = %v", w, k, v)
			}
			sum += max(v, 0)
		}
		if d := sum - em["time"].(float64); d > 0.01 || d < -0.01 {
			t.Errorf("%s.time %v is not the sum of its timings %v", w, em["time"], sum)
		}
	}
	return entries
}

func TestExportErrors(t *testing.T) {
	stdio := tempTape(t, diffRecorded()...)
	var buf bytes.Buffer
	if _, err := Export(context.Background(), stdio, &buf, ExportHAR); !errors.Is(err, ErrNoHTTP) {
		t.Errorf("HAR of a stdio tape: %v", err)
	}
	if _, err := Export(context.Background(), stdio, &buf, "xml"); err == nil || !strings.Contains(err.Error(), `"xml"`) {
		t.Errorf("bad format: %v", err)
	}
	notTape := filepath.Join(t.TempDir(), "x")
	if err := os.WriteFile(notTape, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Export(context.Background(), notTape, &buf, ExportNDJSON); !errors.Is(err, tape.ErrNotTape) {
		t.Errorf("not a tape: %v", err)
	}
	if buf.Len() != 0 {
		t.Errorf("output on error: %q", buf.String())
	}
}

// recordRefServerHTTP records a real session of the Go SDK client with the
// reference server (Go SDK) through the capture proxy, over Streamable HTTP,
// into path: tools listed, echo, sleep with progress, a failing call.
func recordRefServerHTTP(t *testing.T, path string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := refserver.New()
	if err != nil {
		t.Fatal(err)
	}
	up := httptest.NewServer(refserver.HTTPHandler(srv, refserver.HTTPConfig{}))
	defer up.Close()
	addr, stop := recordingProxy(t, ctx, up.URL, path, 100*time.Millisecond)

	c := mcp.NewClient(&mcp.Implementation{Name: "mcptape-analysis-test", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	calls := []*mcp.CallToolParams{
		{Name: "echo", Arguments: map[string]any{"message": "hello"}},
		{Name: "sleep", Arguments: map[string]any{"ms": 30, "steps": 3}, Meta: mcp.Meta{"progressToken": "p-1"}},
		{Name: "add", Arguments: map[string]any{"a": 2, "b": 3}},
		{Name: "fail", Arguments: map[string]any{"mode": "tool"}},
		{Name: "fail", Arguments: map[string]any{"mode": "rpc"}},
	}
	for _, call := range calls {
		_, _ = cs.CallTool(ctx, call) // "fail" fails on purpose
	}
	if err := cs.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	stop()
}

// recordingProxy serves, on a loopback port, a capture proxy to the
// upstream at up (its /mcp) that records into a new tape at path, with
// the shutdown grace given. It returns the proxy's address and stop,
// which shuts the proxy down and closes the tape.
func recordingProxy(t *testing.T, ctx context.Context, up, path string, grace time.Duration) (addr string, stop func()) {
	t.Helper()
	w, err := tape.Create(path, tape.Header{Version: "test", Transport: "http", Target: up + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := capture.NewHTTPProxy(up+"/mcp", w, capture.WithShutdownGrace(grace))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- p.Serve(pctx, ln) }()
	return ln.Addr().String(), func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("proxy: %v", err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestExportHARRecordedHTTP(t *testing.T) {
	path := filepath.Join(t.TempDir(), "refserver-http.jsonl.zst")
	recordRefServerHTTP(t, path)
	out, st := export(t, path, ExportHAR)
	entries := validateHAR(t, out)
	if len(entries) < 8 || st.Entries != int64(len(entries)) {
		t.Fatalf("%d entries (stats %d) for a session of 8 requests", len(entries), st.Entries)
	}
	var calls, sse int
	for _, e := range entries {
		if strings.Contains(harField(e, "request.postData.text"), `"tools/call"`) {
			calls++
		}
		if harField(e, "response.content.mimeType") == "text/event-stream" && strings.Contains(harField(e, "response.content.text"), "data: {") {
			sse++
		}
	}
	if calls != 5 || sse < 5 {
		t.Errorf("%d tools/call entries (want 5), %d with an SSE body", calls, sse)
	}
	// The NDJSON export of the same tape holds every message.
	nd, nst := export(t, path, ExportNDJSON)
	sc := bufio.NewScanner(bytes.NewReader(nd))
	sc.Buffer(nil, 1<<20)
	n := 0
	for sc.Scan() {
		n++
	}
	if int64(n) != nst.Messages || n < 16 {
		t.Errorf("ndjson: %d lines, %d messages", n, nst.Messages)
	}
}

// refServerFixture is a tape recorded from the reference server (Go SDK)
// over Streamable HTTP, kept in testdata; -record (the flag of the inspect
// tests that re-records real-peer fixtures) records it again.
func refServerFixture(t *testing.T) string {
	t.Helper()
	path := filepath.Join(goldenDir, "export", "refserver-http.jsonl.zst")
	if f := flag.Lookup("record"); f != nil && f.Value.String() == "true" {
		recordRefServerHTTP(t, path)
	}
	return path
}

func TestExportRecordedFixture(t *testing.T) {
	path := refServerFixture(t)
	har, _ := export(t, path, ExportHAR)
	validateHAR(t, har)
	golden(t, "export/refserver-http.har", har)
	nd, _ := export(t, path, ExportNDJSON)
	golden(t, "export/refserver-http.ndjson", nd)
}
