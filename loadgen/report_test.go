package loadgen

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeReport builds a report whose series hold the given latencies.
func fakeReport(t *testing.T, start time.Time, dur time.Duration, vals map[string][]time.Duration, errs ...ErrorCount) *Report {
	t.Helper()
	st := newStats()
	for name, vs := range vals {
		for _, v := range vs {
			st.record([]string{name}, v)
		}
	}
	st.sent = int64(len(vals["tools/call"]))
	st.done = st.sent
	st.setups = 2
	st.sentIn([]string{"tools/call"}, st.sent)
	for _, e := range errs {
		for range e.Count {
			st.fail([]string{"tools/call"}, e.Class, e.Detail)
		}
	}
	r := &runner{o: &options{version: "2025-06-18", sessions: 2}, target: Target{URL: "http://x/mcp"}, st: st, work: t.Context(), start: start}
	return r.report(start.Add(dur), start.Add(dur))
}

// roundTrip writes rep as JSON and reads it back.
func jsonRoundTrip(t *testing.T, rep *Report) *Report {
	t.Helper()
	var b bytes.Buffer
	if err := rep.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	back, err := ReadReport(&b)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// readOldReport writes rep as JSON without the members a report of
// format 1 gained later (ok, error_answers, no_answer), as an older
// mcptape wrote it, and reads it back.
func readOldReport(t *testing.T, rep *Report) *Report {
	t.Helper()
	var b bytes.Buffer
	if err := rep.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ok", "error_answers", "no_answer"} {
		if _, ok := m[k]; !ok {
			t.Fatalf("the JSON report has no %q", k)
		}
		delete(m, k)
	}
	old, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ReadReport(bytes.NewReader(old))
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// TestMergeExact splits one set of latencies between three generators'
// reports, sends each through JSON, merges them, and checks the merged
// histogram is exactly the one of a single run recording everything.
func TestMergeExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	all := map[string][]time.Duration{}
	parts := make([]map[string][]time.Duration, 3)
	for i := range parts {
		parts[i] = map[string][]time.Duration{}
	}
	for i := 0; i < 30000; i++ {
		v := time.Duration(rng.ExpFloat64() * float64(3*time.Millisecond))
		if rng.IntN(1000) == 0 {
			v += time.Second // a rare stall
		}
		name := "tools/call"
		all[name] = append(all[name], v)
		p := parts[rng.IntN(3)]
		p[name] = append(p[name], v)
	}
	start := time.Unix(1700000000, 0)
	one := fakeReport(t, start, 10*time.Second, all, ErrorCount{Class: ClassTimeout, Count: 3})
	var reps []*Report
	for i, p := range parts {
		r := fakeReport(t, start.Add(time.Duration(i)*time.Second), 9*time.Second, p, ErrorCount{Class: ClassTimeout, Count: 1})
		if i > 0 { // GET streams in two of the runs
			r.GetStream = &GetStreamReport{Opened: 2, Messages: int64(3 * i), Notifications: int64(2 * i), Requests: int64(i)}
		}
		reps = append(reps, jsonRoundTrip(t, r))
	}
	merged, err := Merge(reps...)
	if err != nil {
		t.Fatal(err)
	}
	merged = jsonRoundTrip(t, merged)
	mh, err := merged.Find("tools/call").Hist()
	if err != nil {
		t.Fatal(err)
	}
	oh, _ := one.Find("tools/call").Hist()
	if !mh.Equals(oh) {
		t.Fatalf("merged histogram differs from the single run's")
	}
	ms, os := merged.Find("tools/call"), one.Find("tools/call")
	if ms.P99 != os.P99 || ms.P999 != os.P999 || ms.Max != os.Max || ms.Count != 30000 {
		t.Errorf("merged %+v, single %+v", ms, os)
	}
	if merged.Generators != 3 || merged.Sessions != 6 || merged.ErrorTotal != 3 || merged.Requests != 30000 {
		t.Errorf("merged totals: generators %d sessions %d errors %d requests %d", merged.Generators, merged.Sessions, merged.ErrorTotal, merged.Requests)
	}
	if g := merged.GetStream; g == nil || *g != (GetStreamReport{Opened: 4, Messages: 9, Notifications: 6, Requests: 3}) {
		t.Errorf("merged GET streams %+v, want 4 opened, 9 messages: 6 notifications, 3 requests", g)
	}
	if merged.Duration != 11*time.Second {
		t.Errorf("merged duration %v, want 11s (earliest start to latest end)", merged.Duration)
	}
}

func TestMergeErrors(t *testing.T) {
	a := fakeReport(t, time.Now(), time.Second, map[string][]time.Duration{"x": {time.Millisecond}})
	b := fakeReport(t, time.Now(), time.Second, map[string][]time.Duration{"x": {time.Millisecond}})
	b.Model = "open"
	if _, err := Merge(a, b); err == nil || !strings.Contains(err.Error(), "model") {
		t.Errorf("merging models: %v", err)
	}
	if _, err := Merge(); err == nil {
		t.Error("merging nothing succeeded")
	}
	c := jsonRoundTrip(t, a)
	c.Series[0].Histogram = "AAAA"
	c.Series[0].hist = nil
	if _, err := Merge(a, c); err == nil {
		t.Error("merging a broken histogram succeeded")
	}
}

func TestReadReportRejects(t *testing.T) {
	for _, in := range []string{``, `{`, `{"format":2}`, `{"format":1,"series":[{"name":"x","count":1,"histogram":"!!"}]}`} {
		if _, err := ReadReport(strings.NewReader(in)); err == nil {
			t.Errorf("ReadReport(%q) succeeded", in)
		}
	}
}

func TestThresholds(t *testing.T) {
	rep := fakeReport(t, time.Now(), time.Second, map[string][]time.Duration{"tools/call": {time.Millisecond, 2 * time.Millisecond, 40 * time.Millisecond}},
		ErrorCount{Class: ClassTimeout, Count: 1})
	cases := []struct {
		spec  string
		holds bool
	}{
		{"tools/call:p99<50ms", true},
		{"tools/call:p99<10ms", false},
		{"tools/call:p50<=3ms", true},
		{"tools/call:p50<1ms", false},
		{"tools/call:max>30ms", true},
		{"tools/call:count>=3", true},
		{"tools/call:rate>10/s", false},
		{"errors<50%", true},
		{"errors<10%", false},
		{"errors<1", false},
		{"errors<=1", true},
		{"nosuch:p99<1s", false},
	}
	for _, c := range cases {
		th, err := ParseThreshold(c.spec)
		if err != nil {
			t.Fatalf("%s: %v", c.spec, err)
		}
		if why := th.Check(rep); (why == "") != c.holds {
			t.Errorf("%s: holds=%v, want %v (%s)", c.spec, why == "", c.holds, why)
		}
	}
	for _, bad := range []string{"", "p99", "x:p98<1ms", "x:p99<fast", "errors<", "errors<200%", ":p99<1ms", "x:p99<-1ms",
		"errors<NaN%", "errors<NaN", "x:rate>NaN/s", "x:count<nan"} { // NaN compares false with everything: no threshold
		if _, err := ParseThreshold(bad); err == nil {
			t.Errorf("ParseThreshold(%q) succeeded", bad)
		}
	}
}

// TestThresholdFailureLine: a broken threshold reads as one line giving
// the spec once and the measured value with 3 significant digits.
func TestThresholdFailureLine(t *testing.T) {
	rep := fakeReport(t, time.Now(), time.Second, map[string][]time.Duration{"echo": {301039636, 301039636}},
		ErrorCount{Class: ClassTimeout, Count: 1})
	for _, c := range []struct{ spec, want string }{
		{"echo:max<300ms", "echo:max<300ms failed: measured 301ms"},
		{"echo:p99<=1ms", "echo:p99<=1ms failed: measured 301ms"},
		{"errors<1", "errors<1 failed: measured 1"},
		{"nosuch:p99<1s", `nosuch:p99<1s failed: no series "nosuch" in the report`},
	} {
		th, err := ParseThreshold(c.spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := th.Check(rep); got != c.want {
			t.Errorf("Check = %q, want %q", got, c.want)
		}
	}
}

func TestTextReport(t *testing.T) {
	rep := fakeReport(t, time.Now(), time.Second, map[string][]time.Duration{"tools/call echo": {time.Millisecond}},
		ErrorCount{Class: ClassStatus, Detail: "503", Count: 2})
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tools/call echo", "p99.9", "http status: 503", "errors    2, by kind and message"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, b.String())
		}
	}
}

// TestTextReportKeepsControlCharactersOut: an error message quotes the
// server and a series name comes from a tape; their control characters
// (C0 and C1) reach the terminal as marks.
func TestTextReportKeepsControlCharactersOut(t *testing.T) {
	rep := fakeReport(t, time.Now(), time.Second, map[string][]time.Duration{"tools/call e\u009b2Jcho": {time.Millisecond}},
		ErrorCount{Class: ClassJSONRPC, Detail: "-32000 bad\x1b]0;title\x07 thing", Count: 1})
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"tools/call e·2Jcho", "bad·]0;title· thing"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text report lacks %q:\n%q", want, b.String())
		}
	}
	if strings.ContainsAny(b.String(), "\x1b\x07\u009b") {
		t.Errorf("text report holds control characters:\n%q", b.String())
	}
}

// TestTextBatchLine: the batches line lists the outcomes separated by
// semicolons, with none after the last.
func TestTextBatchLine(t *testing.T) {
	for _, tc := range []struct {
		outcomes []ErrorCount
		want     string
	}{
		{[]ErrorCount{{Class: BatchAccepted, Count: 10}},
			"batches   of 4, negotiated 2025-03-26 (has batches), every batch answered: 10 accepted\n"},
		{[]ErrorCount{{Class: BatchAccepted, Count: 1}, {Class: BatchDropped, Count: 2}},
			"batches   of 4, negotiated 2025-03-26 (has batches), 1 of 3 batches answered in full: 1 accepted; 2 no answer to batch\n"},
	} {
		rep := fakeReport(t, time.Now(), time.Second, map[string][]time.Duration{"tools/call echo": {time.Millisecond}})
		rep.Batch = &BatchReport{Size: 4, Negotiated: "2025-03-26", InSpec: true, Outcomes: tc.outcomes}
		var b strings.Builder
		if err := rep.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "\n"+tc.want) {
			t.Errorf("text report lacks the line %q:\n%s", tc.want, b.String())
		}
	}
}

func FuzzParseThreshold(f *testing.F) {
	for _, s := range []string{"tools/call:p99<50ms", "errors<1%", "errors<=3", "a:b:rate>=1/s", "x:max>1h"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		th, err := ParseThreshold(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("multi-line error %q", err)
			}
			return
		}
		_ = th.Check(&Report{})
	})
}

func FuzzReadReport(f *testing.F) {
	f.Add(`{"format":1,"series":[]}`)
	f.Add(`{"format":1,"series":[{"name":"x","count":1,"histogram":"HISTFAAAAC142pJpmSzMwMDAxgABzFCakYGB2c1gxwIG+w8QgfcpTFd5mQABAAD//3MWBoo="}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		rep, err := ReadReport(strings.NewReader(s))
		if err != nil {
			return
		}
		if _, err := Merge(rep, rep); err != nil {
			return
		}
	})
}

// TestHgrm checks the percentile distribution file: header, increasing
// percentiles and counts, a last line at 100% with the total, and the
// footer; and that the directory writer names files after the series.
func TestHgrm(t *testing.T) {
	var vals []time.Duration
	for i := 1; i <= 1000; i++ {
		vals = append(vals, time.Duration(i)*time.Millisecond)
	}
	rep := fakeReport(t, time.Now(), time.Second, map[string][]time.Duration{"tools/call echo": vals})
	dir := t.TempDir()
	if err := rep.WriteHgrmDir(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "tools_call_echo.hgrm"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if !strings.Contains(lines[0], "Percentile") || !strings.HasPrefix(lines[len(lines)-1], "#[Max") || !strings.Contains(lines[len(lines)-1], "1000]") {
		t.Fatalf("hgrm:\n%s", b)
	}
	prevP, prevC := -1.0, int64(-1)
	rows := 0
	for _, l := range lines[2 : len(lines)-2] {
		f := strings.Fields(l)
		p, _ := strconv.ParseFloat(f[1], 64)
		c, _ := strconv.ParseInt(f[2], 10, 64)
		if p <= prevP || c < prevC {
			t.Fatalf("not increasing at %q", l)
		}
		prevP, prevC = p, c
		rows++
	}
	if prevP != 1 || prevC != 1000 || rows < 30 {
		t.Errorf("last row %v %d after %d rows", prevP, prevC, rows)
	}
	if v, _ := strconv.ParseFloat(strings.Fields(lines[2+rows/2])[0], 64); v < 1 || v > 1000 {
		t.Errorf("values not in ms: %v", v)
	}
}

// TestAllFailed: a report in which not one request succeeded (sent or
// dropped) says so in one line, naming its most frequent error; one
// success, or no request at all, says nothing.
func TestAllFailed(t *testing.T) {
	errs := []ErrorCount{{Class: ClassDropped, Count: 1}, {Class: ClassTransport, Detail: "server exited (status 1)", Count: 3}}
	tests := []struct {
		name string
		rep  Report
		want string
	}{
		{"none made", Report{}, ""},
		{"no session", Report{ErrorTotal: 2, Errors: errs[1:]}, ""},
		{"one succeeded", Report{Requests: 4, Answered: 1, RequestErrors: 3, Errors: errs[1:]}, ""},
		{"all sent failed", Report{Requests: 3, RequestErrors: 3, Errors: errs[1:]}, "no request succeeded: all 3 failed, most often with transport: server exited (status 1)"},
		{"sent and dropped", Report{Requests: 3, Dropped: 1, RequestErrors: 4, Errors: errs}, "no request succeeded: all 4 failed, most often with transport: server exited (status 1)"},
		{"the only one", Report{Requests: 1, RequestErrors: 1, Errors: errs[1:]}, "no request succeeded: the only one failed, with transport: server exited (status 1)"},
		{"no detail", Report{Requests: 1, Dropped: 1, RequestErrors: 2, Errors: []ErrorCount{{Class: ClassDropped, Count: 1}, {Class: ClassTimeout, Count: 1}}}, "no request succeeded: all 2 failed, most often with dropped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.rep.AllFailed(); got != tt.want {
				t.Errorf("AllFailed() = %q, want %q", got, tt.want)
			}
		})
	}
	if JudgesErrors([]Threshold{{Stat: "p99"}}) || !JudgesErrors([]Threshold{{Stat: "p99"}, {Stat: "errors"}}) {
		t.Error("JudgesErrors: want true only with a threshold on errors")
	}
}

// TestJudge: a run in which not one request succeeded gets AllFailed's
// reason as its Failure, which the text and JSON reports then say, unless
// it failed already, was interrupted, is a capacity search or a threshold
// on errors judges it; a merge of such runs judges its own totals.
func TestJudge(t *testing.T) {
	errs := []ErrorCount{{Class: ClassTransport, Detail: "server exited (status 1)", Count: 3}}
	allFailed := "no request succeeded: all 3 failed, most often with transport: server exited (status 1)"
	failed := func() Report { return Report{Requests: 3, RequestErrors: 3, ErrorTotal: 3, Errors: errs} }
	tests := []struct {
		name string
		rep  func() Report
		th   []Threshold
		want string
	}{
		{"all failed", failed, nil, allFailed},
		{"latency threshold only", failed, []Threshold{{Stat: "p99"}}, allFailed},
		{"errors threshold", failed, []Threshold{{Stat: "errors"}}, ""},
		{"failed already", func() Report { r := failed(); r.Failure = "no session could be set up"; return r }, nil, "no session could be set up"},
		{"interrupted", func() Report { r := failed(); r.Interrupted = true; return r }, nil, ""},
		{"capacity search", func() Report { r := failed(); r.Capacity = &CapacityReport{}; return r }, nil, ""},
		{"one succeeded", func() Report { r := failed(); r.Requests, r.Answered = 4, 1; return r }, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := tt.rep()
			rep.Judge(tt.th)
			if rep.Failure != tt.want {
				t.Fatalf("Failure %q, want %q", rep.Failure, tt.want)
			}
			var text, js strings.Builder
			if err := rep.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if err := rep.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			if tt.want != "" && (!strings.Contains(text.String(), "FAILED    "+tt.want) || !strings.Contains(js.String(), `"failure": "`+tt.want+`"`)) {
				t.Errorf("reports lack the verdict:\n%s\n%s", text.String(), js.String())
			}
		})
	}
	a, b := failed(), Report{Requests: 10, Answered: 10}
	a.Judge(nil)
	b.Judge(nil)
	m, err := Merge(&a, &b)
	if err != nil {
		t.Fatal(err)
	}
	if m.Failure != "" {
		t.Errorf("merge of a run that all failed and one that all succeeded: Failure %q", m.Failure)
	}
}

// TestTextReportAgrees: every count of the text report agrees with its
// noun, for 1 and for more.
func TestTextReportAgrees(t *testing.T) {
	tests := []struct {
		n    int64
		want []string
	}{
		{1, []string{"closed, 1 session\n", "1 session set up", "progress  1 call with progress, 1 notification,",
			"cancel    1 call picked", "get       1 of 1 session opened", "(1 notification, 1 request)",
			"exits     1 stdio server exited", "unreachable 1 time,", "1 attempt failed"}},
		{2, []string{"closed, 2 sessions\n", "2 sessions set up", "progress  2 calls with progress, 2 notifications,",
			"cancel    2 calls picked", "get       2 of 2 sessions opened", "(2 notifications, 2 requests)",
			"exits     2 stdio servers exited", "unreachable 2 times,", "2 attempts failed"}},
	}
	for _, tt := range tests {
		n := tt.n
		rep := &Report{Model: "closed", Sessions: int(n), Setups: n,
			Progress:    &ProgressReport{CallsWithProgress: n, Notifications: n},
			Cancel:      &CancelReport{Chosen: n},
			GetStream:   &GetStreamReport{Opened: n, Notifications: n, Requests: n},
			ServerExits: []ErrorCount{{Class: "exit code 1", Count: n}},
			Outage:      &OutageReport{Periods: n, Attempts: n}}
		var b strings.Builder
		if err := rep.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		for _, want := range tt.want {
			if !strings.Contains(b.String(), want) {
				t.Errorf("n=%d: text report lacks %q:\n%s", n, want, b.String())
			}
		}
	}
}

// TestMergeWarnings: a merge of runs that did not all run at one time says
// so (its rates count the gap), one of overlapping runs does not, and each
// generator's own warnings are kept, named by its report.
func TestMergeWarnings(t *testing.T) {
	start := time.Unix(1700000000, 0)
	at := func(offset, d time.Duration) *Report {
		return fakeReport(t, start.Add(offset), d, map[string][]time.Duration{"x": {time.Millisecond}})
	}
	tests := []struct {
		name    string
		reports []*Report
		want    []string
	}{
		{"overlapping", []*Report{at(0, 5*time.Second), at(2*time.Second, 5*time.Second)}, nil},
		{"one after the other", []*Report{at(10*time.Second, 5*time.Second), at(0, 5*time.Second)},
			[]string{"the runs did not all run at one time: report 1 started 5s after report 2 ended, so the merged duration spans the gap and its rates are lower than the load was"}},
		{"one apart from two", []*Report{at(0, 5*time.Second), at(time.Second, 5*time.Second), at(6*time.Second, time.Second)},
			[]string{"the runs did not all run at one time: report 3 started 1s after report 1 ended, so the merged duration spans the gap and its rates are lower than the load was"}},
		{"warnings kept", func() []*Report {
			a, b := at(0, 5*time.Second), at(0, 5*time.Second)
			b.Warnings = []string{"interval log: disk full"}
			return []*Report{a, b}
		}(), []string{"report 2: interval log: disk full"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			merged, err := Merge(tc.reports...)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(merged.Warnings, tc.want) {
				t.Errorf("warnings %q, want %q", merged.Warnings, tc.want)
			}
		})
	}
}
