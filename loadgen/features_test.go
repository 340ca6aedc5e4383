package loadgen

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/mcptape/mcptape/internal/refserver"
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
// HdrHistogram log reader and checks the intervals of each series add up
// to the series.
func TestHlog(t *testing.T) {
	url := refHTTP(t, refserver.HTTPConfig{JSONResponse: true})
	var log bytes.Buffer
	rep, err := Run(context.Background(), Target{URL: url}, mustCalls(t, `tools/call echo {"message":"hi"}`),
		WithSessions(2), WithDuration(500*time.Millisecond), WithHlog(&log, 100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]int64{}
	intervals := 0
	r := hdrhistogram.NewHistogramLogReader(&log)
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			break
		}
		intervals++
		sums[h.Tag()] += h.TotalCount()
	}
	if intervals < 4 || len(rep.Warnings) != 0 {
		t.Fatalf("%d intervals, warnings %v:\n%s", intervals, rep.Warnings, log.String())
	}
	for _, s := range rep.Series {
		if tag := strings.ReplaceAll(s.Name, " ", "_"); sums[tag] != s.Count {
			t.Errorf("series %q: %d in the log, %d in the report", s.Name, sums[tag], s.Count)
		}
	}
}

// TestSessionExpiry lets the reference server forget idle sessions (100 ms)
// while the sessions think for 300 ms: every request after the first finds
// its session expired (404), which is counted, and the session sets itself
// up again.
func TestSessionExpiry(t *testing.T) {
	url := refHTTP(t, refserver.HTTPConfig{JSONResponse: true, SessionTimeout: 100 * time.Millisecond})
	rep, err := Run(context.Background(), Target{URL: url}, mustCalls(t, `tools/call echo {"message":"hi"}`),
		WithSessions(2), WithRequests(6), WithThink(300*time.Millisecond), WithTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	expired := errorCount(rep, ClassExpired)
	if expired == 0 || rep.Setups != 2+expired || rep.Answered+expired != 6 {
		t.Fatalf("expired %d setups %d answered %d errors %v", expired, rep.Setups, rep.Answered, rep.Errors)
	}
}

// TestGetStream opens each session's GET stream against the reference
// server and still gets every answer.
func TestGetStream(t *testing.T) {
	url := refHTTP(t, refserver.HTTPConfig{})
	rep, err := Run(context.Background(), Target{URL: url}, mustCalls(t, `tools/call echo {"message":"hi"}`),
		WithSessions(3), WithRequests(30), WithGetStream())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Answered != 30 || rep.ErrorTotal != 0 {
		t.Fatalf("answered %d errors %v", rep.Answered, rep.Errors)
	}
}

// TestCancelHTTP cancels every call of a 2 s sleep after 50 ms over
// Streamable HTTP: with 2025 sessions (notifications/cancelled, then the
// stream closed) and with 2026-07-28 (closing the stream is the
// cancellation: the server never answers). The reference server holds the
// answer's headers back until the call ends, so the cancellation must not
// wait for the send to return.
func TestCancelHTTP(t *testing.T) {
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
			opts := []Option{WithSessions(2), WithRequests(4), WithCancel(50*time.Millisecond, 1), WithTimeout(10 * time.Second)}
			if c.version != "" {
				opts = append(opts, WithProtocolVersion(c.version))
			}
			start := time.Now()
			rep, err := Run(context.Background(), Target{URL: refHTTP(t, c.cfg)}, mustCalls(t, `tools/call sleep {"ms":2000}`), opts...)
			if err != nil {
				t.Fatal(err)
			}
			cr := rep.Cancel
			if cr == nil || cr.Sent != 4 || rep.ErrorTotal != 0 || time.Since(start) > 5*time.Second {
				t.Fatalf("cancel %+v errors %v in %v", cr, rep.Errors, time.Since(start))
			}
			if c.version != "" && cr.AnsweredAnyway != 0 {
				t.Errorf("2026-07-28: %d answered after the stream was closed", cr.AnsweredAnyway)
			}
		})
	}
}
