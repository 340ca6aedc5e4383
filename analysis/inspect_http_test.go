package analysis

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/tape"
)

// withDir returns s with direction d (for events).
func withDir(d tape.Direction, s step) step { s.dir = d; return s }

// TestInspectCutMessages: a message the HTTP recorder announced as cut
// (an "error" event with "truncated":true just before it, same exchange
// and direction) is counted as cut and listed as a proxy error, not
// reported as invalid JSON; an unannounced one, or one announced for
// another exchange or direction, still is.
func TestInspectCutMessages(t *testing.T) {
	const cut = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"s":"AAAA`
	marker := `{"error":"request body decoded past 4 bytes: recorded cut, forwarded whole","truncated":true,"kept":60,"limit":"max-decoded"}`
	tests := []struct {
		name        string
		steps       []step
		cutMessages int64
		invalid     int64
		proxyErrors int64
	}{
		{name: "announced", steps: after(
			onExchange(3, withDir(tape.ClientToServer, evt(5*ms, tape.EventError, marker))),
			onExchange(3, c2s(5*ms, cut)),
		), cutMessages: 1, proxyErrors: 1},
		{name: "announced, response", steps: after(
			onExchange(3, c2s(4*ms, `{"jsonrpc":"2.0","id":7,"method":"ping"}`)),
			onExchange(3, withDir(tape.ServerToClient, evt(5*ms, tape.EventError, marker))),
			onExchange(3, s2c(5*ms, `{"jsonrpc":"2.0","id":7,"result":{"s":"AAA`)),
		), cutMessages: 1, proxyErrors: 1},
		{name: "not announced", steps: after(
			onExchange(3, c2s(5*ms, cut)),
		), invalid: 1},
		{name: "announced for another exchange", steps: after(
			onExchange(4, withDir(tape.ClientToServer, evt(5*ms, tape.EventError, marker))),
			onExchange(3, c2s(5*ms, cut)),
		), invalid: 1, proxyErrors: 1},
		{name: "announced for the other direction", steps: after(
			onExchange(3, withDir(tape.ServerToClient, evt(5*ms, tape.EventError, marker))),
			onExchange(3, c2s(5*ms, cut)),
		), invalid: 1, proxyErrors: 1},
		{name: "plain proxy error", steps: after(
			onExchange(3, withDir(tape.ClientToServer, evt(5*ms, tape.EventError, `{"error":"upstream refused"}`))),
			onExchange(3, c2s(5*ms, cut)),
		), invalid: 1, proxyErrors: 1},
		{name: "only the next message", steps: after(
			onExchange(3, withDir(tape.ClientToServer, evt(5*ms, tape.EventError, marker))),
			onExchange(3, c2s(5*ms, cut)),
			onExchange(3, c2s(6*ms, cut)),
		), cutMessages: 1, invalid: 1, proxyErrors: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := inspectSteps(t, tt.steps...)
			if rep.CutMessages != tt.cutMessages || violationCount(rep, "invalid-json") != tt.invalid || rep.ProxyErrorsN != tt.proxyErrors {
				t.Errorf("cut %d, invalid-json %d, proxy errors %d; want %d, %d, %d",
					rep.CutMessages, violationCount(rep, "invalid-json"), rep.ProxyErrorsN, tt.cutMessages, tt.invalid, tt.proxyErrors)
			}
		})
	}
}

// TestExportHARPlainExchange: a plain HTTP exchange (OAuth, discovery)
// has no messages; its request and response bodies come from the "end"
// event's request_body and body.
func TestExportHARPlainExchange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl.zst")
	writeRecords(t, path, "http", []tape.Record{
		httpEvt(1*tick, 1, tape.EventHTTP, `{"phase":"response","method":"POST","path":"/token","conn":1,"status":200,"content_type":"application/json","request_headers":{"Content-Type":["application/x-www-form-urlencoded"]},"response_headers":{"Content-Type":["application/json"]}}`),
		httpEvt(2*tick, 1, tape.EventHTTP, `{"phase":"end","method":"POST","path":"/token","conn":1,"status":200,"closed_by":"server","request_bytes":40,"response_bytes":30,"request_body":"grant_type=authorization_code&code=%3Credacted%3A1-1%3E","body":"{\"access_token\":\"<redacted:4-7>\"}"}`),
	})
	out, _ := export(t, path, ExportHAR)
	entries := validateHAR(t, out)
	if len(entries) != 1 {
		t.Fatalf("%d entries", len(entries))
	}
	for field, want := range map[string]string{
		"request.postData.text":     "grant_type=authorization_code&code=%3Credacted%3A1-1%3E",
		"request.postData.mimeType": "application/x-www-form-urlencoded",
		"response.content.text":     `{"access_token":"<redacted:4-7>"}`,
	} {
		if got := harField(entries[0], field); got != want {
			t.Errorf("%s = %q, want %q", field, got, want)
		}
	}
}

// TestMissingSessionHeaderStateless: once a server assigned an
// Mcp-Session-Id, a later request without one breaks the rule, except a
// 2026-07-28 request (by its Mcp-Protocol-Version header or by the version
// its session's requests carry): that revision has no session id.
func TestMissingSessionHeaderStateless(t *testing.T) {
	assigned := evt(0, tape.EventHTTP, `{"phase":"response","method":"POST","path":"/mcp","status":200,"request_headers":{},"response_headers":{"Mcp-Session-Id":["abc"]}}`)
	modernReq := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	tests := []struct {
		name  string
		steps []step
		want  int64
	}{
		{name: "2025 request without the header", steps: append([]step{assigned}, inSession("b",
			onExchange(2, c2s(1*ms, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)),
			onExchange(2, evt(2*ms, tape.EventHTTP, `{"phase":"response","method":"POST","path":"/mcp","status":400,"request_headers":{"Mcp-Protocol-Version":["2025-06-18"]}}`)))...),
			want: 1},
		{name: "2026-07-28 by its header", steps: append([]step{assigned}, inSession("b",
			onExchange(2, c2s(1*ms, modernReq)),
			onExchange(2, evt(2*ms, tape.EventHTTP, `{"phase":"response","method":"POST","path":"/mcp","status":200,"request_headers":{"Mcp-Protocol-Version":["2026-07-28"],"Mcp-Method":["tools/list"]}}`)))...)},
		{name: "2026-07-28 by its body", steps: append([]step{assigned}, inSession("b",
			onExchange(2, c2s(1*ms, modernReq)),
			onExchange(2, evt(2*ms, tape.EventHTTP, `{"phase":"response","method":"POST","path":"/mcp","status":200,"request_headers":{"Content-Type":["application/json"]}}`)))...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := inspectSteps(t, tt.steps...)
			if n := violationCount(rep, RuleMissingSessionHeader); n != tt.want {
				t.Errorf("%s counted %d times, want %d: %+v", RuleMissingSessionHeader, n, tt.want, rep.Violations)
			}
		})
	}
}

// TestInspectShutdownCutExchange: a request whose HTTP exchange the
// recorder's own shutdown cut before the upstream answered (its "end"
// event: closed_by proxy, tape.ShutdownCutError with no status, or
// tape.ShutdownCutResponseError with the status of the response that had
// started) is reported as cut by the recorder's shutdown, in the
// problems, the text and the JSON, not as the server's "never answered"
// (nor in its session's unanswered count, which check fails on). One
// whose response the server broke off (closed_by server with an error) is
// broken off: an error, apart from never answered. Any other end leaves
// an unanswered request unanswered.
func TestInspectShutdownCutExchange(t *testing.T) {
	const call = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow"}}`
	const cancel7 = `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`
	end := func(fields string) step {
		return onExchange(3, evt(9*ms, tape.EventHTTP, `{"phase":"end","method":"POST","path":"/mcp","conn":1,`+fields+`}`))
	}
	cutErr, _ := json.Marshal(tape.ShutdownCutError)
	cutRespErr, _ := json.Marshal(tape.ShutdownCutResponseError)
	tests := []struct {
		name       string
		end        []step
		unanswered int64
		cut        int64
		broken     int64
		status     int
	}{
		{"cut by the shutdown", []step{end(`"closed_by":"proxy","error":` + string(cutErr))}, 0, 1, 0, 0},
		{"no end", nil, 1, 0, 0, 0},
		{"cut by the shutdown mid-answer", []step{end(`"status":200,"closed_by":"proxy","error":` + string(cutRespErr))}, 0, 1, 0, 200},
		{"another proxy failure", []step{end(`"closed_by":"proxy","error":"upstream went away"`)}, 1, 0, 0, 0},
		{"closed by the server", []step{end(`"status":200,"closed_by":"server"`)}, 1, 0, 0, 0},
		{"broken off by the server", []step{end(`"status":200,"closed_by":"server","error":"unexpected EOF"`)}, 0, 0, 1, 200},
		// cancelled first: it needed no answer, whatever cut it
		{"cancelled, then cut by the shutdown", []step{onExchange(4, c2s(6*ms, cancel7)), end(`"status":200,"closed_by":"proxy","error":` + string(cutRespErr))}, 0, 0, 0, 0},
		{"cancelled, then broken off", []step{onExchange(4, c2s(6*ms, cancel7)), end(`"status":200,"closed_by":"server","error":"unexpected EOF"`)}, 0, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := inspectSteps(t, append(after(onExchange(3, c2s(5*ms, call))), tt.end...)...)
			u := rep.Unanswered
			if u.Count != tt.unanswered || u.CutByShutdown != tt.cut || int64(len(u.CutByShutdownRequests)) != tt.cut ||
				u.BrokenOff != tt.broken || int64(len(u.BrokenOffRequests)) != tt.broken {
				t.Errorf("unanswered %d, cut by shutdown %d (%d listed), broken off %d (%d listed); want %d, %d, %d",
					u.Count, u.CutByShutdown, len(u.CutByShutdownRequests), u.BrokenOff, len(u.BrokenOffRequests), tt.unanswered, tt.cut, tt.broken)
			}
			for _, r := range append(u.CutByShutdownRequests, u.BrokenOffRequests...) {
				if r.Status != tt.status || r.Method != "tools/call" {
					t.Errorf("listed %+v; want the tools/call, status %d", r, tt.status)
				}
			}
			if wantCancelled := int64(strings.Count(tt.name, "cancelled, then")); u.Cancelled != wantCancelled {
				t.Errorf("cancelled and not answered %d, want %d", u.Cancelled, wantCancelled)
			}
			var sessUnanswered int64
			for _, s := range rep.Sessions {
				sessUnanswered += s.Unanswered
			}
			if sessUnanswered != tt.unanswered || rep.Sessions[0].BrokenOff != tt.broken {
				t.Errorf("sessions' unanswered %d, broken off %d; want %d, %d", sessUnanswered, rep.Sessions[0].BrokenOff, tt.unanswered, tt.broken)
			}
			problems := map[string]Problem{}
			for _, p := range rep.Problems {
				problems[p.What] = p
			}
			var text, js bytes.Buffer
			if err := WriteText(&text, rep); err != nil {
				t.Fatal(err)
			}
			if err := WriteJSON(&js, rep); err != nil {
				t.Fatal(err)
			}
			_, isUnanswered := problems["unanswered"]
			p, isCut := problems["cut-by-shutdown"]
			b, isBroken := problems["broken-off"]
			if isUnanswered != (tt.unanswered > 0) || isCut != (tt.cut > 0) || isBroken != (tt.broken > 0) || strings.Contains(text.String(), "never answered") != (tt.unanswered > 0) {
				t.Errorf("problems %v; text:\n%s", rep.Problems, text.String())
			}
			if tt.broken > 0 && (b.Severity != SeverityError || !strings.Contains(b.Summary, "broke off") || !strings.Contains(text.String(), "BROKEN OFF  1")) {
				t.Errorf("problem %+v: want an error naming the response broken off; text:\n%s", b, text.String())
			}
			if tt.cut == 0 {
				return
			}
			if p.Severity != SeverityWarning || p.Count != 1 || !strings.Contains(p.Summary, "cut by the recorder's shutdown") || len(p.Details) != 1 || !strings.Contains(p.Details[0], "tools/call id 7") {
				t.Errorf("problem %+v: want a warning naming the request cut by the recorder's shutdown", p)
			}
			if !strings.Contains(text.String(), "CUT BY THE RECORDER'S SHUTDOWN  1") {
				t.Errorf("text says nothing of the cut:\n%s", text.String())
			}
			var back struct {
				Unanswered struct {
					Count    int64        `json:"count"`
					Cut      int64        `json:"cut_by_shutdown"`
					Requests []RequestRef `json:"cut_by_shutdown_requests"`
				} `json:"unanswered"`
			}
			if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Unanswered.Count != 0 || back.Unanswered.Cut != 1 || len(back.Unanswered.Requests) != 1 || back.Unanswered.Requests[0].Method != "tools/call" {
				t.Errorf("JSON unanswered %+v (%v): want count 0, cut_by_shutdown 1 listing the tools/call", back.Unanswered, err)
			}
		})
	}
}

// TestInspectRefusedNotifications: notifications the client sent on an
// HTTP exchange that the server refused with an error status (a batch of
// notifications at 2025-06-18, which has no batches: 400) are listed
// under http-refused with the refused requests, counted in their
// session; a 401 (the start of OAuth) and an accepted exchange (202) are
// not.
func TestInspectRefusedNotifications(t *testing.T) {
	const note = `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`
	const call = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x"}}`
	end := func(status string) step {
		return onExchange(3, evt(9*ms, tape.EventHTTP, `{"phase":"end","method":"POST","path":"/mcp","conn":1,"status":`+status+`,"closed_by":"server"}`))
	}
	tests := []struct {
		name    string
		sent    []string
		status  string
		notes   int64
		summary string // of the http-refused problem, "" for none
	}{
		{"a batch of notifications refused", []string{note, note}, "400", 2, "2 notifications refused with an HTTP error status"},
		{"a request and a notification refused", []string{call, note}, "403", 1, "1 request and 1 notification refused with an HTTP error status"},
		{"a notification answered 401", []string{note}, "401", 0, ""},
		{"a notification accepted", []string{note}, "202", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			steps := after()
			for _, m := range tt.sent {
				steps = append(steps, onExchange(3, c2s(5*ms, m)))
			}
			rep := inspectSteps(t, append(steps, end(tt.status))...)
			r := rep.Refused
			if r.Notifications != tt.notes || int64(len(r.NotificationRefs)) != tt.notes || rep.Sessions[0].RefusedNotifications != tt.notes {
				t.Errorf("refused notifications %d (%d listed, %d in the session), want %d", r.Notifications, len(r.NotificationRefs), rep.Sessions[0].RefusedNotifications, tt.notes)
			}
			for _, ref := range r.NotificationRefs {
				if ref.ID != "" || ref.Method != "notifications/roots/list_changed" || strconv.Itoa(ref.Status) != tt.status {
					t.Errorf("listed %+v", ref)
				}
			}
			var got string
			for _, p := range rep.Problems {
				if p.What == "http-refused" {
					got = p.Summary
					if int(p.Count) != len(p.Details) || !strings.Contains(strings.Join(p.Details, "\n"), "notifications/roots/list_changed: HTTP "+tt.status) {
						t.Errorf("details %q (count %d)", p.Details, p.Count)
					}
				}
			}
			if got != tt.summary {
				t.Errorf("http-refused %q, want %q", got, tt.summary)
			}
		})
	}
}
