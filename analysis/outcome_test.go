package analysis

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"html"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/tape"
)

// cutScenario is an upstream that leaves the one request of a recording
// unanswered, and how the recording ends: cut marks the recorder's
// shutdown ending it while the request waits.
type cutScenario struct {
	name     string
	upstream func(w http.ResponseWriter, r *http.Request, arrived chan<- struct{})
	shutdown bool
	outcome  string
}

// sseHead starts an SSE response and flushes its head and one progress
// event: the answer has started.
func sseHead(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.Write([]byte("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"p\",\"progress\":1}}\n\n"))
	w.(http.Flusher).Flush()
}

var cutScenarios = []cutScenario{
	{"http-cut-before-response", func(w http.ResponseWriter, r *http.Request, arrived chan<- struct{}) {
		arrived <- struct{}{}
		<-r.Context().Done()
	}, true, OutcomeCutByShutdown},
	{"http-cut-mid-response", func(w http.ResponseWriter, r *http.Request, arrived chan<- struct{}) {
		sseHead(w)
		arrived <- struct{}{}
		<-r.Context().Done()
	}, true, OutcomeCutByShutdown},
	{"http-broken-off", func(w http.ResponseWriter, r *http.Request, arrived chan<- struct{}) {
		sseHead(w)
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close() // mid-body: the proxy reads an unexpected EOF
		}
		arrived <- struct{}{}
	}, false, OutcomeBrokenOff},
}

// recordCut records one tools/call through the capture proxy to an
// upstream that behaves as sc says, into path.
func recordCut(t *testing.T, sc cutScenario, path string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	arrived := make(chan struct{}, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body.Close()
		sc.upstream(w, r, arrived)
	}))
	defer up.Close()
	addr, stop := recordingProxy(t, ctx, up.URL, path, 10*time.Millisecond)
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+addr+"/mcp",
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","_meta":{"progressToken":"p"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := (&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
		if err == nil {
			io.Copy(io.Discard, resp.Body) // up to the cut
			resp.Body.Close()
		}
	}()
	select {
	case <-arrived:
	case <-ctx.Done():
		t.Fatal("the request did not reach the upstream")
	}
	if !sc.shutdown {
		<-answered // the client saw the response break off: the exchange is over
	}
	stop()
	<-answered
}

// cutFixture is the recorded tape of sc: recorded now, and kept in
// testdata with -record (the fixtures of mcptape check's tests too).
func cutFixture(t *testing.T, sc cutScenario) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), sc.name+".jsonl.zst")
	recordCut(t, sc, path)
	if f := flag.Lookup("record"); f != nil && f.Value.String() == "true" {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(goldenDir, sc.name+".jsonl.zst"), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// TestRecordedCutOutcomes: a request whose exchange was cut, recorded
// through the real proxy (the recorder's shutdown before the response,
// the shutdown after the response started, the upstream breaking off its
// response), has one outcome in every output that classifies requests:
// inspect (counts, problems, no "never answered"), the requests table,
// the HTML report's timeline, and the OTLP export; none calls it never
// answered.
func TestRecordedCutOutcomes(t *testing.T) {
	for _, sc := range cutScenarios {
		t.Run(sc.name, func(t *testing.T) {
			path := cutFixture(t, sc)
			rep, err := Inspect(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			u := rep.Unanswered
			if u.Count != 0 {
				t.Errorf("inspect: %d never answered, want 0 (%s)", u.Count, sc.outcome)
			}
			var got int64
			var refs []RequestRef
			want := "cut-by-shutdown"
			if sc.outcome == OutcomeCutByShutdown {
				got, refs = u.CutByShutdown, u.CutByShutdownRequests
			} else {
				got, refs, want = u.BrokenOff, u.BrokenOffRequests, "broken-off"
			}
			if got != 1 || len(refs) != 1 || refs[0].Method != "tools/call" {
				t.Errorf("inspect: %d %s (%+v), want the tools/call", got, sc.outcome, refs)
			}
			if len(refs) == 1 && (refs[0].Status == 200) != (sc.name != "http-cut-before-response") {
				t.Errorf("inspect: status %d listed: want 200 for a response that had started, else none", refs[0].Status)
			}
			var problems []string
			for _, p := range rep.Problems {
				problems = append(problems, p.What)
			}
			if !strings.Contains(strings.Join(problems, " "), want) || strings.Contains(strings.Join(problems, " "), "unanswered") {
				t.Errorf("inspect problems %v: want %s, not unanswered", problems, want)
			}

			var rows bytes.Buffer
			if _, err := ExportRequests(context.Background(), []string{path}, &rows, RequestsNDJSON); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(rows.String(), `"method":"tools/call"`) || !strings.Contains(rows.String(), `"outcome":"`+sc.outcome+`"`) {
				t.Errorf("requests table: want the tools/call's outcome %s:\n%s", sc.outcome, rows.String())
			}

			var page bytes.Buffer
			if _, err := WriteHTMLReport(context.Background(), path, &page); err != nil {
				t.Fatal(err)
			}
			text := html.EscapeString(describeOutcome(sc.outcome).text)
			if !strings.Contains(page.String(), "tools/call slow at +") || !strings.Contains(page.String(), ": "+text+"</title>") ||
				strings.Contains(page.String(), "never answered</title>") {
				t.Errorf("HTML report: the timeline does not say %q of the tools/call, or says never answered", text)
			}

			out, _ := export(t, path, ExportOTLP)
			var doc struct {
				ResourceSpans []struct {
					ScopeSpans []struct {
						Spans []otlpSpan `json:"spans"`
					} `json:"scopeSpans"`
				} `json:"resourceSpans"`
			}
			if err := json.Unmarshal(out, &doc); err != nil {
				t.Fatal(err)
			}
			found := false
			for _, sp := range doc.ResourceSpans[0].ScopeSpans[0].Spans {
				if !strings.HasPrefix(sp.Name, "tools/call") {
					continue
				}
				found = true
				attrs := map[string]string{}
				for _, a := range sp.Attributes {
					if a.Value.StringValue != nil {
						attrs[a.Key] = *a.Value.StringValue
					}
					if a.Key == "mcptape.unanswered" {
						t.Errorf("OTLP: span %s marked unanswered", sp.Name)
					}
				}
				failed := describeOutcome(sc.outcome).failed
				if attrs["mcptape.outcome"] != sc.outcome || (sp.Status.Code == otlpStatusError) != failed || sp.Status.Message == "never answered" {
					t.Errorf("OTLP: span %s outcome %q, status %+v; want %s (error status: %v)", sp.Name, attrs["mcptape.outcome"], sp.Status, sc.outcome, failed)
				}
			}
			if !found {
				t.Errorf("OTLP: no tools/call span:\n%s", out)
			}
		})
	}
}

// TestSessionDetailsBound: WithSessionDetails keeps the first n error
// responses and unanswered requests of every session, by record, the
// late sessions' too, and no more than MaxSessionDetails of each kind in
// all however many sessions the tape holds; without it sessions keep
// none. The error responses fill their bound, and every session still
// keeps its request never answered, known only at the tape's end (the
// bound was shared: the error responses left no room for it).
func TestSessionDetailsBound(t *testing.T) {
	const n = 5
	sessions := MaxSessionDetails/n + 20 // past the error responses' bound
	at := time.Date(2026, 7, 28, 0, 0, 0, 0, time.UTC).UnixNano()
	var recs []tape.Record
	add := func(sess string, dir tape.Direction, frame string) {
		recs = append(recs, tape.Record{Type: tape.TypeMessage, Time: at + int64(len(recs)), Session: sess, Dir: dir, Frame: []byte(frame)})
	}
	for s := range sessions {
		sess := fmt.Sprintf("s%05d", s)
		for i := range n + 2 {
			add(sess, tape.ClientToServer, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i))
			add(sess, tape.ServerToClient, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"error":{"code":-32601,"message":"no"}}`, i))
		}
		add(sess, tape.ClientToServer, `{"jsonrpc":"2.0","id":"late","method":"tools/list"}`) // never answered
	}
	path := filepath.Join(t.TempDir(), "t.jsonl.zst")
	writeRecords(t, path, "stdio", recs)
	for _, tt := range []struct {
		name string
		opts []Option
		want int // details of the first session
	}{{"none", nil, 0}, {"per session", []Option{WithSessionDetails(n)}, n + 1}} {
		t.Run(tt.name, func(t *testing.T) {
			rep, err := Inspect(context.Background(), path, append(tt.opts, WithMaxSessions(sessions))...)
			if err != nil {
				t.Fatal(err)
			}
			errs, unanswered, full := 0, 0, 0
			for _, s := range rep.Sessions {
				if s.Details == nil {
					continue
				}
				d := s.Details
				errs += len(d.ErrorResponses)
				unanswered += len(d.Unanswered)
				if len(d.ErrorResponses) == n {
					full++
				}
				if len(d.ErrorResponses) > n || len(d.Unanswered) > 1 || (len(d.ErrorResponses) > 0 && d.ErrorResponses[0].ID != "0") {
					t.Fatalf("session %s details %+v: want its first %d error responses", s.ID, d, n)
				}
			}
			if first := rep.Sessions[0].Details; tt.want == 0 && first != nil ||
				tt.want > 0 && (first == nil || len(first.ErrorResponses)+len(first.Unanswered) != tt.want || first.Unanswered[0].ID != `"late"`) {
				t.Errorf("first session's details %+v, want %d: its first error responses and its unanswered request", first, tt.want)
			}
			if tt.want > 0 && (errs != MaxSessionDetails || full == len(rep.Sessions) || unanswered != len(rep.Sessions)) {
				t.Errorf("%d error responses kept, %d of %d sessions with all theirs, %d unanswered requests kept; want %d (some dropped past the bound), and every session's unanswered one",
					errs, full, len(rep.Sessions), unanswered, MaxSessionDetails)
			}
		})
	}
}

// TestOTLPNullIDAnswer: a request answered on its exchange by an error
// whose id is null (the TypeScript SDK's HTTP 400) is answered, as
// inspect says, with that error: its span has the error's status and
// code, not "never answered"; a request refused by an HTTP status alone
// is refused.
func TestOTLPNullIDAnswer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl.zst")
	writeRecords(t, path, "http", []tape.Record{
		httpRec(1*time.Millisecond, 1, tape.ClientToServer, `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`),
		httpRec(2*time.Millisecond, 1, tape.ServerToClient, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: Server not initialized"}}`),
		httpEvt(3*time.Millisecond, 1, tape.EventHTTP, `{"phase":"end","method":"POST","path":"/mcp","status":400,"closed_by":"server"}`),
		httpRec(4*time.Millisecond, 2, tape.ClientToServer, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`),
		httpEvt(5*time.Millisecond, 2, tape.EventHTTP, `{"phase":"end","method":"POST","path":"/mcp","status":403,"closed_by":"server"}`),
	})
	out, _ := export(t, path, ExportOTLP)
	got := map[string]string{}
	for _, sp := range parseOTLP(t, out).ResourceSpans[0].ScopeSpans[0].Spans {
		outcome, code := "", ""
		for _, a := range sp.Attributes {
			switch a.Key {
			case "mcptape.outcome":
				outcome = a.Value.GetStringValue()
			case "rpc.jsonrpc.error_code":
				code = fmt.Sprint(a.Value.GetIntValue())
			}
		}
		got[sp.Name] = fmt.Sprintf("%s %s %d %s", outcome, code, sp.Status.Code, sp.Status.Message)
	}
	want := map[string]string{
		"server/discover": "error -32000 2 JSON-RPC error",
		"tools/list":      "refused  2 refused with an HTTP error",
	}
	if !maps.Equal(got, want) {
		t.Errorf("spans %q, want %q", got, want)
	}
}

// TestSessionCloseOutcome: a request still in flight at the end of the
// tape, sent before its session's close, ends as that close says: the
// recorder's shutdown (stdio: it got a signal, or its Go caller
// cancelled it; HTTP or WebSocket: the proxy stopped with the session
// open) cut it; a server that ended the session (a WebSocket connection
// it lost or closed, an HTTP session it answered 404 for, a legacy SSE
// stream it ended, a stdio server that exited) broke it off; a client that ended the session (stdio: it
// closed its input; HTTP: it deleted the session; WebSocket: it closed or
// lost its connection) left before the answer; any other close leaves it
// never answered, and so does a close before it was sent.
func TestSessionCloseOutcome(t *testing.T) {
	const call = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow"}}`
	tests := []struct {
		name, close string
		closeAt     time.Duration
		want        string // cut, broken, gone or unanswered
	}{
		{"stdio signal", `{"by":"signal"}`, 9 * ms, "cut"},
		{"stdio context", `{"by":"context"}`, 9 * ms, "cut"},
		{"stdio server exit", `{"by":"server-exit"}`, 9 * ms, "broken"},
		{"stdio client eof", `{"by":"client-eof"}`, 9 * ms, "gone"},
		{"http delete", `{"by":"client","reason":"delete"}`, 9 * ms, "gone"},
		{"ws client close frame", `{"by":"client","reason":"close-frame"}`, 9 * ms, "gone"},
		{"http session not found", `{"by":"server","reason":"not-found"}`, 9 * ms, "broken"},
		{"legacy sse stream ended by the server", `{"by":"server","reason":"stream-ended"}`, 9 * ms, "broken"},
		{"ws close frame from the server", `{"by":"server","reason":"close-frame"}`, 9 * ms, "broken"},
		{"legacy sse stream ended by the client", `{"by":"client","reason":"stream-ended"}`, 9 * ms, "gone"},
		{"http connection closed", `{"reason":"connection-closed"}`, 9 * ms, "unanswered"},
		{"proxy shutdown", `{"by":"proxy","reason":"shutdown"}`, 9 * ms, "cut"},
		{"ws connection lost by the server", `{"by":"server","reason":"connection-lost"}`, 9 * ms, "broken"},
		{"ws connection lost by the client", `{"by":"client","reason":"connection-lost"}`, 9 * ms, "gone"},
		{"ws too big", `{"by":"proxy","reason":"too-big"}`, 9 * ms, "unanswered"},
		{"closed before the request", `{"by":"signal"}`, 4 * ms, "unanswered"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := inspectSteps(t, append(after(c2s(5*ms, call)), evt(tt.closeAt, tape.EventClose, tt.close))...)
			u := rep.Unanswered
			got := map[string]int64{"cut": u.CutByShutdown, "broken": u.BrokenOff, "gone": u.ClientGone, "unanswered": u.Count}
			for k, n := range got {
				if want := int64(0); k == tt.want {
					want = 1
					if n != want {
						t.Errorf("%s %d, want 1 (%+v)", k, n, u)
					}
				} else if n != 0 {
					t.Errorf("%s %d, want 0", k, n)
				}
			}
			if s := rep.Sessions[0]; s.Unanswered != got["unanswered"] || s.BrokenOff != got["broken"] {
				t.Errorf("session: unanswered %d, broken off %d", s.Unanswered, s.BrokenOff)
			}
		})
	}
}

// TestLostInGapOrder: a request with no answer is lost in a gap when a gap
// marker follows it before its session's close (or the tape's end); a
// close before the gap decided it (its outcome holds), a gap before the
// request says nothing of it, a cancelled request stays cancelled.
func TestLostInGapOrder(t *testing.T) {
	const (
		call   = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow"}}`
		cancel = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`
		gap    = `{"error":"tapes 2 to 2 of this recording are missing","gap":{"from":1,"to":1}}`
		cut    = `{"by":"proxy","reason":"shutdown"}`
	)
	tests := []struct {
		name  string
		steps []step
		want  string
	}{
		{"gap then close", []step{c2s(5*ms, call), evt(6*ms, tape.EventError, gap), evt(9*ms, tape.EventClose, cut)}, OutcomeLostInGap},
		{"gap then the end", []step{c2s(5*ms, call), evt(6*ms, tape.EventError, gap)}, OutcomeLostInGap},
		{"close then gap", []step{c2s(5*ms, call), evt(6*ms, tape.EventClose, cut), evt(9*ms, tape.EventError, gap)}, OutcomeCutByShutdown},
		{"gap before the request", []step{evt(4*ms, tape.EventError, gap), c2s(5*ms, call)}, OutcomeUnanswered},
		{"cancelled", []step{c2s(5*ms, call), c2s(6*ms, cancel), evt(7*ms, tape.EventError, gap)}, OutcomeCancelled},
		{"a proxy error is no gap", []step{c2s(5*ms, call), evt(6*ms, tape.EventError, `{"error":"upstream down"}`)}, OutcomeUnanswered},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			rep, err := Inspect(context.Background(), tempTape(t, after(tt.steps...)...), WithOperations(func(op *Operation) {
				if op.Method == "tools/call" {
					got = append(got, op.Outcome)
				}
			}))
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0] != tt.want {
				t.Errorf("outcomes %q, want %s", got, tt.want)
			}
			if n := rep.Unanswered.LostInGap; (n == 1) != (tt.want == OutcomeLostInGap) || n > 1 {
				t.Errorf("inspect: %d lost in a gap (%+v)", n, rep.Unanswered)
			}
		})
	}
}
