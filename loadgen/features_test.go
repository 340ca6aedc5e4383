package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/jsonrpc"
)

func outcome(b *BatchReport, what string) int64 {
	if b == nil {
		return -1
	}
	for _, o := range b.Outcomes {
		if o.Class == what {
			return o.Count
		}
	}
	return 0
}

// TestBatches sends batches of 4 to the reference server (the Go SDK): it
// accepts them under 2025-03-26 and answers 400 from 2025-06-18, which the
// run announces up front.
func TestBatches(t *testing.T) {
	cases := []struct {
		version  string
		outcome  string
		answered int64
		notice   bool
	}{
		{"2025-03-26", BatchAccepted, 40, false},
		{"2025-06-18", BatchRejected + "400", 0, true},
	}
	for _, c := range cases {
		t.Run(c.version, func(t *testing.T) {
			url := refHTTP(t, refserver.HTTPConfig{})
			var notices []string
			rep, err := Run(context.Background(), Target{URL: url}, mustCalls(t, `tools/call echo {"message":"hi"}`),
				WithSessions(2), WithRequests(40), WithBatch(4), WithProtocolVersion(c.version), WithTimeout(5*time.Second),
				WithNotice(func(s string) { notices = append(notices, s) }))
			if err != nil {
				t.Fatal(err)
			}
			if rep.Requests != 40 || rep.Answered != c.answered || outcome(rep.Batch, c.outcome) != 10 || rep.Batch.Negotiated != c.version {
				t.Fatalf("requests %d answered %d batch %+v", rep.Requests, rep.Answered, rep.Batch)
			}
			if (len(notices) == 1 && strings.Contains(notices[0], "no JSON-RPC batches")) != c.notice {
				t.Errorf("notices %q", notices)
			}
		})
	}
}

// TestCancelStdio cancels every sleep call after 30 ms over stdio with
// notifications/cancelled, and checks the counts and the cancel series.
func TestCancelStdio(t *testing.T) {
	rep, err := Run(context.Background(), stdioTarget(t), mustCalls(t, `tools/call sleep {"ms":2000}`),
		WithSessions(2), WithRequests(6), WithCancel(30*time.Millisecond, 1), WithTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Cancel
	if c == nil || c.Chosen != 6 || c.Sent != 6 || rep.ErrorTotal != 0 {
		t.Fatalf("cancel %+v errors %v", c, rep.Errors)
	}
	quiet := rep.Find("tools/call sleep" + cancelSuffix)
	var n int64
	if quiet != nil {
		n = quiet.Count
		if quiet.Max > CancelQuietWindow {
			t.Errorf("cancel to quiet %v beyond the window", quiet.Max)
		}
	}
	if n+c.Quiet != 6 {
		t.Errorf("quiet series %d + quiet at once %d != 6 cancels", n, c.Quiet)
	}
}

// TestCancelRatio cancels half the calls; the others are answered.
func TestCancelRatio(t *testing.T) {
	url := refHTTP(t, refserver.HTTPConfig{})
	rep, err := Run(context.Background(), Target{URL: url}, mustCalls(t, `tools/call sleep {"ms":300}`),
		WithSessions(4), WithRequests(8), WithCancel(0, 0.5), WithTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Cancel; c == nil || c.Chosen != 4 || c.Sent != 4 {
		t.Fatalf("cancel %+v", rep.Cancel)
	}
	if s := rep.Find("tools/call sleep"); s == nil || s.Count != 4 || rep.Answered != 4 {
		t.Errorf("answered %d, series %+v", rep.Answered, s)
	}
}

// TestHlog writes an interval log during a run, reads it back with the
// HdrHistogram log reader and checks that the intervals follow one another
// and that the intervals of each series add up to the series. The run's
// answers are spread over time by the calls themselves (one session, each
// call sleeping 40 ms on the server), not by a wall-clock duration, so a
// slow setup on a loaded machine cannot squeeze the calls into one
// interval: the first and last answers are at least 280 ms apart, more
// than five 50 ms intervals.
func TestHlog(t *testing.T) {
	const every, sleep, n = 50 * time.Millisecond, 40 * time.Millisecond, 8
	url := refHTTP(t, refserver.HTTPConfig{JSONResponse: true})
	var log bytes.Buffer
	rep, err := Run(context.Background(), Target{URL: url}, mustCalls(t, fmt.Sprintf(`tools/call sleep {"ms":%d}`, sleep.Milliseconds())),
		WithSessions(1), WithRequests(n), WithTimeout(10*time.Second), WithHlog(&log, every))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Answered != n || rep.ErrorTotal != 0 || len(rep.Warnings) != 0 {
		t.Fatalf("answered %d errors %v warnings %v", rep.Answered, rep.Errors, rep.Warnings)
	}
	sums := map[string]int64{}
	intervals := map[string]int{} // per series, intervals holding values
	var starts []int64
	ends := map[int64]int64{} // interval start -> end (ms)
	r := hdrhistogram.NewHistogramLogReader(&log)
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			break
		}
		if h.TotalCount() == 0 || h.EndTimeMs() <= h.StartTimeMs() {
			t.Errorf("interval %q [%d, %d] ms with %d values", h.Tag(), h.StartTimeMs(), h.EndTimeMs(), h.TotalCount())
		}
		sums[h.Tag()] += h.TotalCount()
		intervals[h.Tag()]++
		if e, ok := ends[h.StartTimeMs()]; !ok {
			starts = append(starts, h.StartTimeMs())
			ends[h.StartTimeMs()] = h.EndTimeMs()
		} else if e != h.EndTimeMs() {
			t.Errorf("interval from %d ms ends at %d and %d", h.StartTimeMs(), e, h.EndTimeMs())
		}
	}
	for i := 1; i < len(starts); i++ { // in order, none overlapping
		if starts[i] < ends[starts[i-1]] {
			t.Errorf("interval from %d ms starts before the previous one ends (%d ms)", starts[i], ends[starts[i-1]])
		}
	}
	// n answers at least `sleep` apart span more than five intervals.
	if tag := "tools/call_sleep"; intervals[tag] < 2 {
		t.Fatalf("%d answers spanning %v in %d interval(s) of %v:\n%s", n, (n-1)*sleep, intervals[tag], every, log.String())
	}
	for _, s := range rep.Series {
		if tag := strings.ReplaceAll(s.Name, " ", "_"); sums[tag] != s.Count {
			t.Errorf("series %q: %d in the log, %d in the report", s.Name, sums[tag], s.Count)
		}
	}
}

// forgetful wraps the reference server's handler so that it forgets a
// session (the SDK's own DELETE handling) once the session has had a
// tools/call answered, before serving the session's next request: that
// request gets the SDK's 404 for an unknown session, every time, whatever
// the timing.
func forgetful(t *testing.T) string {
	t.Helper()
	s, err := refserver.New()
	if err != nil {
		t.Fatal(err)
	}
	inner := refserver.HTTPHandler(s, refserver.HTTPConfig{JSONResponse: true})
	var mu sync.Mutex
	served := map[string]bool{} // session id -> a call was answered
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("Mcp-Session-Id")
		mu.Lock()
		forget := served[id]
		delete(served, id)
		mu.Unlock()
		if forget {
			del := httptest.NewRequestWithContext(r.Context(), http.MethodDelete, r.URL.String(), nil)
			del.Host, del.RemoteAddr = r.Host, r.RemoteAddr // as the client's own DELETE
			for _, k := range []string{"Mcp-Session-Id", "Mcp-Protocol-Version"} {
				del.Header.Set(k, r.Header.Get(k))
			}
			rec := httptest.NewRecorder()
			inner.ServeHTTP(rec, del)
			if rec.Code/100 != 2 {
				t.Errorf("DELETE of session %s: %d", id, rec.Code)
			}
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := &statusWriter{ResponseWriter: w}
		inner.ServeHTTP(rec, r)
		if info := jsonrpc.Classify(body); id != "" && rec.status/100 == 2 && info.Kind == jsonrpc.KindRequest && info.Method == "tools/call" {
			mu.Lock()
			served[id] = true
			mu.Unlock()
		}
	}))
	t.Cleanup(ts.Close)
	return ts.URL + refserver.Path
}

// statusWriter notes the status of an answer.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// TestSessionExpiry: the server forgets the session after every answered
// call, so one session's six requests alternate answered, expired (404,
// counted), answered after setting the session up again (before its next
// request, not after the last one): exact counts.
func TestSessionExpiry(t *testing.T) {
	rep, err := Run(context.Background(), Target{URL: forgetful(t)}, mustCalls(t, `tools/call echo {"message":"hi"}`),
		WithSessions(1), WithRequests(6), WithTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	expired := errorCount(rep, ClassExpired)
	if expired != 3 || rep.ErrorTotal != 3 || rep.Setups != 3 || rep.Answered != 3 || rep.Requests != 6 {
		t.Fatalf("expired %d setups %d answered %d of %d, errors %v; want 3, 3, 3 of 6", expired, rep.Setups, rep.Answered, rep.Requests, rep.Errors)
	}
	if s := rep.Find(SetupSeries); s == nil || s.Count != 3 {
		t.Errorf("setup series %+v, want 3 setups", s)
	}
}

// TestSessionIdleTimeout lets the reference server's own idle timer
// (100 ms) expire sessions that think for 300 ms between requests. The SDK
// starts a session's timer before it serves the initialize, and pauses it
// for a request only if it has not fired yet, so on a loaded machine a
// session may also expire during its setup (its notifications/initialized
// gets 404; a session whose first setup fails takes no further part, the
// other sends the requests) or under a request (never answered: a
// timeout). The checks
// hold whatever the timing: sessions expired, only expiries and timeouts
// are errors, every request is answered or lost to one of them, and every
// setup beyond the first of each session follows an expiry.
func TestSessionIdleTimeout(t *testing.T) {
	url := refHTTP(t, refserver.HTTPConfig{JSONResponse: true, SessionTimeout: 100 * time.Millisecond})
	rep, err := Run(context.Background(), Target{URL: url}, mustCalls(t, `tools/call echo {"message":"hi"}`),
		WithSessions(2), WithRequests(6), WithThink(300*time.Millisecond), WithTimeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	expired, timeouts := errorCount(rep, ClassExpired), errorCount(rep, ClassTimeout)
	if expired == 0 || rep.ErrorTotal != expired+timeouts || rep.Requests != 6 || rep.Answered+expired+timeouts < rep.Requests ||
		rep.Setups > 2+expired || rep.Setups == 0 {
		t.Fatalf("sent %d: answered %d, expired %d, timeouts %d; setups %d errors %v", rep.Requests, rep.Answered, expired, timeouts, rep.Setups, rep.Errors)
	}
}

// TestCancelHTTP cancels every call of a 5 s sleep after 50 ms over
// Streamable HTTP: with 2025 sessions (notifications/cancelled, then the
// stream closed) and with 2026-07-28 (closing the stream is the
// cancellation: the server never answers). The reference server holds the
// answer's headers back until the call ends, so the cancellation must not
// wait for the send to return: each session's two calls then take the
// cancel delay plus the quiet window, not the 5 s of the call. The measured
// phase, setup excluded, is checked against that, with seconds to spare on
// a loaded machine and far below the 10 s of waiting for the calls.
func TestCancelHTTP(t *testing.T) {
	t.Parallel() // waits on the server, sleeps and back-offs; no other test's state
	const after = 50 * time.Millisecond
	cases := []struct {
		name    string
		cfg     refserver.HTTPConfig
		version string
	}{
		{"2025-06-18", refserver.HTTPConfig{}, ""},
		{"2026-07-28", refserver.HTTPConfig{Stateless: true}, "2026-07-28"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := []Option{WithSessions(2), WithRequests(4), WithCancel(after, 1), WithTimeout(20 * time.Second)}
			if c.version != "" {
				opts = append(opts, WithProtocolVersion(c.version))
			}
			rep, err := Run(context.Background(), Target{URL: refHTTP(t, c.cfg)}, mustCalls(t, `tools/call sleep {"ms":5000}`), opts...)
			if err != nil {
				t.Fatal(err)
			}
			cr, setup := rep.Cancel, rep.Find(SetupSeries)
			if cr == nil || cr.Sent != 4 || rep.ErrorTotal != 0 || setup == nil {
				t.Fatalf("cancel %+v errors %v setup %+v", cr, rep.Errors, setup)
			}
			if limit := 2*(after+CancelQuietWindow) + 3*time.Second; rep.Duration-setup.Max > limit {
				t.Errorf("measured %v, setup at most %v: beyond %v, the cancellation waited for the call", rep.Duration, setup.Max, limit)
			}
			if c.version != "" && cr.AnsweredAnyway != 0 {
				t.Errorf("2026-07-28: %d answered after the stream was closed", cr.AnsweredAnyway)
			}
		})
	}
}
