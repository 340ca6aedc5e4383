package loadgen

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Threshold is one pass/fail condition on a report, parsed by
// ParseThreshold from "SERIES:STAT<VALUE" (STAT one of mean, p50, p90,
// p99, p99.9, max, with a duration value; or rate with a number per
// second, count with a number, or tokens_per_s with the usage tokens per
// second of streamed answers), "errors<N" or "errors<F%": the requests not
// ok (Report.RequestErrors: error answers, no answer, dropped arrivals),
// counted or as a share of the requests sent and dropped (ErrorRatio); the
// errors of session setups are not requests'. The operators
// are <, <=, > and >=. The series of streamed calls carry the suffixes
// FirstChunkSuffix and CompleteSuffix:
// "tools/call chat#first_chunk:p99<300ms",
// "tools/call chat#complete:p99<2s", "tools/call chat:tokens_per_s>100".
type Threshold struct {
	Spec   string
	Series string // "" for errors
	Stat   string
	Op     string
	Value  float64 // nanoseconds for durations, a fraction for percentages
	Pct    bool
}

var thresholdStats = map[string]bool{"mean": true, "p50": true, "p90": true, "p99": true, "p99.9": true, "max": true, "rate": true, "count": true, "tokens_per_s": true}

// ParseThreshold parses a threshold spec.
func ParseThreshold(spec string) (Threshold, error) {
	t := Threshold{Spec: spec}
	i := strings.IndexAny(spec, "<>")
	if i < 0 {
		return t, fmt.Errorf("threshold %q: no < or > operator", spec)
	}
	lhs, rhs := strings.TrimSpace(spec[:i]), spec[i:]
	t.Op = rhs[:1]
	rhs = rhs[1:]
	if strings.HasPrefix(rhs, "=") {
		t.Op += "="
		rhs = rhs[1:]
	}
	rhs = strings.TrimSpace(rhs)
	if lhs == "errors" {
		t.Stat = "errors"
		if p, ok := strings.CutSuffix(rhs, "%"); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
			if err != nil || !(v >= 0 && v <= 100) { // NaN too
				return t, fmt.Errorf("threshold %q: %q is not a percentage from 0 to 100", spec, rhs)
			}
			t.Value, t.Pct = v/100, true
			return t, nil
		}
		v, err := strconv.ParseFloat(rhs, 64)
		if err != nil || !(v >= 0) {
			return t, fmt.Errorf("threshold %q: %q is not an error count or a percentage", spec, rhs)
		}
		t.Value = v
		return t, nil
	}
	j := strings.LastIndexByte(lhs, ':')
	if j <= 0 {
		return t, fmt.Errorf("threshold %q: want SERIES:STAT or errors before the operator", spec)
	}
	t.Series, t.Stat = strings.TrimSpace(lhs[:j]), strings.TrimSpace(lhs[j+1:])
	if !thresholdStats[t.Stat] {
		return t, fmt.Errorf("threshold %q: unknown statistic %q (mean, p50, p90, p99, p99.9, max, rate, count, tokens_per_s)", spec, t.Stat)
	}
	if (t.Stat == "rate" || t.Stat == "tokens_per_s") && IsSetupSeries(t.Series) {
		return t, fmt.Errorf("threshold %q: series %q has no %s: setups are counted, not paced (use count)", spec, t.Series, t.Stat)
	}
	if t.Stat == "rate" || t.Stat == "count" || t.Stat == "tokens_per_s" {
		v, err := strconv.ParseFloat(strings.TrimSuffix(rhs, "/s"), 64)
		if err != nil || !(v >= 0) {
			return t, fmt.Errorf("threshold %q: %q is not a non-negative number", spec, rhs)
		}
		t.Value = v
		return t, nil
	}
	d, err := time.ParseDuration(rhs)
	if err != nil || d < 0 {
		return t, fmt.Errorf("threshold %q: %q is not a duration such as 50ms", spec, rhs)
	}
	t.Value = float64(d)
	return t, nil
}

// Check returns "" when rep meets the threshold, else why not, in one
// line: "tools/call echo:p99<300ms failed: measured 301ms".
func (t Threshold) Check(rep *Report) string {
	o := t.Eval(rep)
	if o.Held {
		return ""
	}
	return t.Spec + " failed: " + o.Why
}

// Outcome is how a report fares against a threshold (Threshold.Eval).
type Outcome struct {
	Held bool
	// Why says why not, without the spec: "measured 301ms" (a duration
	// with 3 significant digits, a share of errors "22.2%"), or "no
	// series "x" in the report". "" when Held.
	Why string
	// Measured is the exact value judged: nanoseconds for a duration, a
	// fraction for a share of errors, a count, a rate per second. Found
	// is false when there was nothing to measure (no such series).
	Measured float64
	Found    bool
}

// Eval judges rep against the threshold.
func (t Threshold) Eval(rep *Report) Outcome {
	got, show, found := t.measure(rep)
	if !found {
		return Outcome{Why: show}
	}
	ok := false
	switch t.Op {
	case "<":
		ok = got < t.Value
	case "<=":
		ok = got <= t.Value
	case ">":
		ok = got > t.Value
	case ">=":
		ok = got >= t.Value
	}
	o := Outcome{Held: ok, Measured: got, Found: true}
	if !ok {
		o.Why = "measured " + show
	}
	return o
}

// measure returns the value of the threshold's statistic in rep, exact
// and for people; found false (and why in show) when rep has no such
// series.
func (t Threshold) measure(rep *Report) (got float64, show string, found bool) {
	if t.Stat == "errors" {
		if t.Pct {
			got = rep.ErrorRatio()
			return got, fmt.Sprintf("%.3g%%", 100*got), true
		}
		return float64(rep.RequestErrors), strconv.FormatInt(rep.RequestErrors, 10), true
	}
	s := rep.Find(t.Series)
	if s == nil {
		return 0, fmt.Sprintf("no series %q in the report", t.Series), false
	}
	var d time.Duration
	switch t.Stat {
	case "mean":
		d = s.Mean
	case "p50":
		d = s.P50
	case "p90":
		d = s.P90
	case "p99":
		d = s.P99
	case "p99.9":
		d = s.P999
	case "max":
		d = s.Max
	case "rate":
		if IsSetupSeries(s.Name) {
			return 0, fmt.Sprintf("series %q has no rate: setups are counted (use count)", s.Name), false
		}
		return s.Rate, fmt.Sprintf("%.1f/s", s.Rate), true
	case "count":
		return float64(s.Count), strconv.FormatInt(s.Count, 10), true
	case "tokens_per_s":
		return s.TokensPerSec, fmt.Sprintf("%.1f tokens/s", s.TokensPerSec), true
	}
	return float64(d), FormatLatency(d), true
}

// AllFailed returns why a run in which not one request succeeded failed,
// "" when one did or none was made: every request sent, and every
// open-model arrival dropped, ended in an error (ErrorRatio 1). The
// reason, one line, names the most frequent error. A load run that is
// not judged by a threshold on errors fails on it (Judge: mcptape load
// exits 1).
func (rep *Report) AllFailed() string {
	n := rep.Requests + rep.Dropped
	if n == 0 || rep.ErrorRatio() < 1 {
		return ""
	}
	why, with := fmt.Sprintf("no request succeeded: all %d failed", n), ", most often with "
	if n == 1 {
		why, with = "no request succeeded: the only one failed", ", with "
	}
	var top *ErrorCount
	for i := range rep.Errors {
		if top == nil || rep.Errors[i].Count > top.Count {
			top = &rep.Errors[i]
		}
	}
	if top != nil {
		why += with + top.Class
		if top.Detail != "" {
			why += ": " + top.Detail
		}
	}
	return why
}

// Judge records the verdict on a run in which not one request succeeded
// as the run's Failure (AllFailed's reason), so that the text and JSON
// reports say it, not only the exit code: unless the run failed already,
// was interrupted (the report is partial), is a capacity search, or one
// of th judges errors.
func (rep *Report) Judge(th []Threshold) {
	if rep.Failure != "" || rep.Interrupted || rep.Capacity != nil || JudgesErrors(th) {
		return
	}
	rep.Failure = rep.AllFailed()
}

// JudgesErrors reports whether one of th is on errors ("errors<1%"):
// then it, not AllFailed, says whether a run whose requests all failed
// failed.
func JudgesErrors(th []Threshold) bool {
	for _, t := range th {
		if t.Stat == "errors" {
			return true
		}
	}
	return false
}
