package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
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
