package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// TestCountsEachOnce: every request sent is counted once, as what became
// of it (ok, answered with an error, failed without an answer), in the
// report, its text, its --results lines and the threshold on errors.
func TestCountsEachOnce(t *testing.T) {
	var buf bytes.Buffer
	rep, err := Run(context.Background(), Target{URL: fakeHTTP(t)}, mustCalls(t, "ping", "boom", "refuse"),
		WithRequests(30), WithResults(&buf, ResultsNDJSON))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"ping": ResultOK, "boom": ResultErrorAnswer, "refuse": ResultNoAnswer}
	got := map[string]int64{}
	for _, s := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var l struct{ Series, Outcome, Counted string }
		if err := json.Unmarshal([]byte(s), &l); err != nil {
			t.Fatalf("line %q: %v", s, err)
		}
		if l.Counted != want[l.Series] || (l.Outcome == "ok") != (l.Counted == ResultOK) {
			t.Errorf("%s: counted %q outcome %q, want %q", l.Series, l.Counted, l.Outcome, want[l.Series])
		}
		got[l.Counted]++
	}
	if rep.Requests != 30 || rep.OK+rep.ErrorAnswers+rep.NoAnswer != 30 || rep.OK == 0 || rep.ErrorAnswers == 0 || rep.NoAnswer == 0 ||
		rep.Answered != rep.OK+rep.ErrorAnswers || rep.RequestErrors != rep.ErrorAnswers+rep.NoAnswer {
		t.Fatalf("sent %d: %d ok, %d error answers, %d no answer, %d answered, %d not ok",
			rep.Requests, rep.OK, rep.ErrorAnswers, rep.NoAnswer, rep.Answered, rep.RequestErrors)
	}
	if got[ResultOK] != rep.OK || got[ResultErrorAnswer] != rep.ErrorAnswers || got[ResultNoAnswer] != rep.NoAnswer {
		t.Errorf("results lines %v, report %d ok, %d error answers, %d no answer", got, rep.OK, rep.ErrorAnswers, rep.NoAnswer)
	}
	// the setup's own error is not a request's: the count on errors
	// judges the requests not ok, as the share does
	rep.ErrorTotal++
	rep.Errors = append(rep.Errors, ErrorCount{Class: ClassTransport, Detail: "setup", Count: 1})
	for spec, measured := range map[string]float64{"errors<1": float64(rep.RequestErrors), "errors<1%": rep.ErrorRatio()} {
		th, err := ParseThreshold(spec)
		if err != nil {
			t.Fatal(err)
		}
		if o := th.Eval(rep); o.Measured != measured {
			t.Errorf("%s measured %v, want %v", spec, o.Measured, measured)
		}
	}
}

// TestSetupHasNoRate: session setup and a scenario's setup steps are
// counted with their latencies, but have no rate over the run's duration
// (1 setup in an 8 s run is not 0.1 setups/s): none in the JSON, "-" in
// the text, and no threshold on it.
func TestSetupHasNoRate(t *testing.T) {
	rep, err := Run(context.Background(), Target{URL: fakeHTTP(t)}, mustCalls(t, "ping"), WithRequests(10),
		WithSetupCalls(mustCalls(t, "tools/list")))
	if err != nil {
		t.Fatal(err)
	}
	rep = jsonRoundTrip(t, rep)
	if p := rep.Find("ping"); p == nil || p.Rate <= 0 {
		t.Fatalf("ping series %+v: want a rate", p)
	}
	for _, name := range []string{SetupSeries, "setup tools/list"} {
		if s := rep.Find(name); s == nil || s.Count != 1 || s.Rate != 0 {
			t.Errorf("series %q %+v: want 1 counted, no rate", name, s)
		}
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{SetupSeries, "setup tools/list"} {
		if !regexp.MustCompile(`(?m)^\s*` + name + `\s+1\s+-\s+0 \(0\.0%\)`).MatchString(b.String()) {
			t.Errorf("text report: %q has a rate:\n%s", name, b.String())
		}
	}
	if _, err := ParseThreshold("session setup:rate>1"); err == nil || !strings.Contains(err.Error(), "no rate") {
		t.Errorf("a threshold on the setups' rate: %v", err)
	}
}
