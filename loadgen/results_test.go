package loadgen

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/refserver"
)

// TestResults writes the results lines of a run with successes and tool
// errors in both formats, and checks one line per request with its
// fields.
func TestResults(t *testing.T) {
	url := refHTTP(t, refserver.HTTPConfig{})
	calls := mustCalls(t, `tools/call echo {"message":"a,\"b\""}`, `tools/call fail {}`)
	type line struct {
		Intended int64  `json:"intended_ns"`
		Sent     int64  `json:"sent_ns"`
		Latency  int64  `json:"latency_ns"`
		Series   string `json:"series"`
		Outcome  string `json:"outcome"`
		Error    string `json:"error"`
	}
	for _, format := range []string{ResultsNDJSON, ResultsCSV} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			start := time.Now()
			rep, err := Run(context.Background(), Target{URL: url}, calls, WithRate(200), WithRequests(60), WithSessions(2), WithResults(&buf, format))
			if err != nil {
				t.Fatal(err)
			}
			var lines []line
			if format == ResultsCSV {
				recs, err := csv.NewReader(&buf).ReadAll()
				if err != nil || len(recs) == 0 || strings.Join(recs[0], ",") != ResultsCSVHeader {
					t.Fatalf("csv: %v %q", err, recs)
				}
				for _, r := range recs[1:] {
					var l line
					_ = json.Unmarshal([]byte(r[0]), &l.Intended)
					_ = json.Unmarshal([]byte(r[1]), &l.Sent)
					_ = json.Unmarshal([]byte(r[2]), &l.Latency)
					l.Series, l.Outcome, l.Error = r[3], r[4], r[5]
					lines = append(lines, l)
				}
			} else {
				for _, s := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
					var l line
					if err := json.Unmarshal([]byte(s), &l); err != nil {
						t.Fatalf("line %q: %v", s, err)
					}
					lines = append(lines, l)
				}
			}
			if int64(len(lines)) != rep.Requests {
				t.Fatalf("%d lines for %d requests", len(lines), rep.Requests)
			}
			fails := 0
			for _, l := range lines {
				if l.Intended < start.UnixNano() || l.Sent < l.Intended-int64(time.Millisecond) || l.Latency <= 0 {
					t.Errorf("times: %+v", l)
				}
				switch l.Series {
				case "tools/call fail":
					fails++
					if l.Outcome != "error" || l.Error != ClassTool {
						t.Errorf("fail: %+v", l)
					}
				case "tools/call echo":
					if l.Outcome != "ok" || l.Error != "" {
						t.Errorf("echo: %+v", l)
					}
				default:
					t.Errorf("series %q", l.Series)
				}
			}
			if int64(fails) != errorCount(rep, ClassTool) {
				t.Errorf("%d failed lines, %d tool errors", fails, errorCount(rep, ClassTool))
			}
		})
	}
	for _, c := range []struct{ path, want string }{{"r.csv", ResultsCSV}, {"R.NDJSON", ResultsNDJSON}, {"r.jsonl", ResultsNDJSON}, {"r.txt", ""}} {
		got, err := ResultsFormat(c.path)
		if got != c.want || (c.want == "") != (err != nil) {
			t.Errorf("%s: %q %v, want %q", c.path, got, err, c.want)
		}
	}
	if _, err := Run(context.Background(), Target{URL: url}, calls, WithRequests(1), WithResults(&bytes.Buffer{}, "xml")); err == nil {
		t.Error("format xml accepted")
	}
}

// TestResultsDropped: arrivals dropped over WithMaxInFlight have their
// lines too (never sent: send time and latency 0, no series, error
// dropped), so that the results file adds up to the report: a line per
// request and per dropped arrival, as many errors as the report counts.
func TestResultsDropped(t *testing.T) {
	url := refHTTP(t, refserver.HTTPConfig{})
	var buf bytes.Buffer
	start := time.Now()
	rep, err := Run(context.Background(), Target{URL: url}, mustCalls(t, `tools/call sleep {"ms":60}`),
		WithRate(100), WithDuration(400*time.Millisecond), WithMaxInFlight(1), WithResults(&buf, ResultsCSV))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Dropped == 0 {
		t.Fatalf("nothing dropped: %+v", rep)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(recs) == 0 {
		t.Fatalf("csv: %v %q", err, recs)
	}
	var dropped, errs int64
	for _, r := range recs[1:] {
		if r[4] == "error" {
			errs++
		}
		if r[5] != ClassDropped {
			continue
		}
		dropped++
		intended, _ := strconv.ParseInt(r[0], 10, 64)
		if intended < start.UnixNano() || r[1] != "0" || r[2] != "0" || r[3] != "" || r[4] != "error" {
			t.Errorf("dropped line %q", r)
		}
	}
	if n := int64(len(recs) - 1); n != rep.Requests+rep.Dropped || dropped != rep.Dropped || errs != rep.ErrorTotal {
		t.Errorf("%d lines, %d dropped, %d errors; report: %d requests, %d dropped, %d errors",
			n, dropped, errs, rep.Requests, rep.Dropped, rep.ErrorTotal)
	}
}

// TestResultsCancelledAtCancel: a cancelled call's results line ends at its
// cancellation, not when the watch for what the server still sends for it
// (up to CancelQuietWindow) ended: its latency was the cancel-after plus
// that second.
func TestResultsCancelledAtCancel(t *testing.T) {
	url := quietServer(t)
	var buf bytes.Buffer
	const after = 50 * time.Millisecond
	rep, err := Run(context.Background(), Target{URL: url}, mustCalls(t, `tools/call sleep {"ms":3000}`),
		WithRequests(2), WithCancel(after, 1), WithResults(&buf, ResultsCSV))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Cancel == nil || rep.Cancel.Sent != 2 {
		t.Fatalf("cancellations %+v, want 2 sent", rep.Cancel)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(recs) != 3 {
		t.Fatalf("csv: %v %q", err, recs)
	}
	for _, r := range recs[1:] {
		latency, _ := strconv.ParseInt(r[2], 10, 64)
		if r[5] != ClassCancelled || time.Duration(latency) < after || time.Duration(latency) > after+CancelQuietWindow/2 {
			t.Errorf("line %q: want cancelled with a latency from %v to %v", r, after, after+CancelQuietWindow/2)
		}
	}
}

// quietServer serves a Streamable HTTP server that, as server-everything,
// goes quiet on a cancelled call: it holds every call's POST open, sending
// nothing, until the client closes it.
func quietServer(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&msg) != nil {
			return
		}
		switch {
		case msg.Method == "initialize":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"quiet","version":"1"}}}`, msg.ID)
		case msg.ID == nil:
			w.WriteHeader(http.StatusAccepted)
		default:
			<-r.Context().Done()
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// TestCancelFreesSession: in the closed model a cancelled call frees its
// session at the cancellation; the watch for what the server still sends
// for it runs on its own, and our own cancellation is no reason to back
// off. The session waited up to CancelQuietWindow (1 s) after each
// cancellation, then backed off as from a server failure, so
// --cancel-after 50ms sent one call a second instead of twenty.
func TestCancelFreesSession(t *testing.T) {
	url := quietServer(t)
	start := time.Now()
	rep, err := Run(context.Background(), Target{URL: url}, mustCalls(t, `tools/call sleep {"ms":3000}`),
		WithDuration(time.Second), WithCancel(50*time.Millisecond, 1))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests < 8 || rep.Cancel == nil || rep.Cancel.Sent != rep.Requests || rep.Cancel.Quiet != rep.Requests {
		t.Errorf("%d requests in 1 s, cancellations %+v: want at least 8, all cancelled and quiet", rep.Requests, rep.Cancel)
	}
	if took := time.Since(start); took > time.Second+CancelQuietWindow+2*time.Second {
		t.Errorf("the run took %v", took)
	}
	// the rates are over the load's time, not the last watch's
	if rep.Duration > time.Second+CancelQuietWindow/2 {
		t.Errorf("the run's measured time is %v, want about 1 s", rep.Duration)
	}
}
