package loadgen

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/mcptape/mcptape/internal/refserver"
)

// TestProfileArrival checks the open model's schedule under stages: the
// arrivals are the integral of a piecewise linear rate.
func TestProfileArrival(t *testing.T) {
	up := profile{{time.Second, 0, 100}, {time.Second, 100, 100}, {time.Second, 100, 0}} // 50 + 100 + 50 arrivals
	cases := []struct {
		p      profile
		x      float64
		want   time.Duration
		wantOK bool
	}{
		{up, 0, 0, true},
		{up, 50, time.Second, true},
		{up, 12.5, 500 * time.Millisecond, true},
		{up, 150, 2 * time.Second, true},
		{up, 175, 2*time.Second + 292893219*time.Nanosecond, true},          // 100t-50t²=25
		{up, 200, 0, false},                                                 // the rate fell to 0
		{profile{{0, 10, 10}}, 25, 2500 * time.Millisecond, true},           // a constant rate
		{profile{{time.Second, 10, 10}}, 15, 1500 * time.Millisecond, true}, // the last target holds
	}
	for _, c := range cases {
		got, ok := c.p.arrival(c.x)
		if ok != c.wantOK || (ok && math.Abs(float64(got-c.want)) > float64(time.Microsecond)) {
			t.Errorf("%v: arrival %v at %v %v, want %v %v", c.p, c.x, got, ok, c.want, c.wantOK)
		}
	}
	// A rate so low that the next arrival is beyond time.Duration's range:
	// it is due at the end of time, not at a wrapped-round negative time
	// (which sent arrivals at once, without end).
	for _, p := range []profile{{{0, 1e-12, 1e-12}}, {{time.Second, 0, 1e-300}}} {
		if got, ok := p.arrival(1); !ok || got != math.MaxInt64 {
			t.Errorf("%v: arrival 1 at %d %v, want %d (the end of time)", p, got, ok, int64(math.MaxInt64))
		}
	}
}

// TestProfileNextAbove checks when a closed-model session becomes active.
func TestProfileNextAbove(t *testing.T) {
	p := profile{{time.Second, 0, 4}, {time.Second, 4, 4}, {time.Second, 4, 0}}
	cases := []struct {
		v      float64
		t      time.Duration
		want   time.Duration
		wantOK bool
	}{
		{0, 0, time.Millisecond, true},                              // just after the start
		{2, 0, 501 * time.Millisecond, true},                        // target 2 at 0.5 s
		{3, 1500 * time.Millisecond, 1500 * time.Millisecond, true}, // active now
		{3, 2900 * time.Millisecond, 0, false},                      // ramping down below 3
		{4, 0, 0, false},                                            // never above 4
	}
	for _, c := range cases {
		got, ok := p.nextAbove(c.v, c.t)
		if ok != c.wantOK || (ok && got != c.want) {
			t.Errorf("above %v from %v: %v %v, want %v %v", c.v, c.t, got, ok, c.want, c.wantOK)
		}
	}
}

// TestStagesOpen runs rate stages (ramp up, hold, ramp down) and checks
// the schedule's total, that the stages' figures add up to the run's,
// that each stage's mark is taken at its end (never early, not a stage
// late), and that each stage got its share: a stage counts the requests
// due in its time (stagecount.go), so the requests of stages 1 to i are
// the arrivals due before the end of stage i, however late a loaded
// machine takes the mark (TestStagesCountByIntendedTime checks each
// stage to the one; this checks the ramps' arithmetic against a profile
// written out here).
func TestStagesOpen(t *testing.T) {
	url := refHTTP(t, refserver.HTTPConfig{})
	const stage = 400 * time.Millisecond
	stages := []Stage{{stage, 50, true}, {stage, 50, true}, {stage, 0, true}}
	rep, err := Run(context.Background(), Target{URL: url}, mustCalls(t, "ping"), WithSessions(2), WithStages(stages))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests != 40 || rep.Model != "open" || len(rep.Stages) != 3 {
		t.Fatalf("requests %d model %s stages %d, want 40 open 3", rep.Requests, rep.Model, len(rep.Stages))
	}
	ping := rep.Find("ping")
	if ping == nil || ping.Count != rep.Requests || rep.ErrorTotal != 0 {
		t.Fatalf("ping series %+v, errors %+v: want every request answered", ping, rep.Errors)
	}
	// the rate of the stages, written out here rather than taken from the
	// options: 0→50/s, 50/s, 50→0/s (10, 20, 10 arrivals)
	want := profile{{stage, 0, 50}, {stage, 50, 50}, {stage, 50, 0}}
	dueBefore := func(d time.Duration) int64 {
		var n int64
		for {
			at, ok := want.arrival(float64(n))
			if !ok || at >= d {
				return n
			}
			n++
		}
	}
	var sum int64
	for i, st := range rep.Stages {
		sum += st.Figures.Requests
		if st.Stage != i+1 || !st.Rate || st.Offset != time.Duration(i)*stage {
			t.Errorf("stage %d: %+v", i+1, st)
		}
		if i == len(rep.Stages)-1 {
			break // the last mark is the run's end
		}
		// the mark at the stage's end: never early, and not a stage late
		end := st.Figures.Ended.Sub(rep.Started)
		if late := end - st.Offset - stage; late < 0 || late >= stage {
			t.Errorf("stage %d: ended at %v, want %v", i+1, end, st.Offset+stage)
		}
		if due := dueBefore(st.Offset + stage); sum != due {
			t.Errorf("stages 1-%d: %d requests, want the %d due before %v", i+1, sum, due, st.Offset+stage)
		}
	}
	if sum != rep.Requests {
		t.Errorf("stages hold %d requests, the run %d", sum, rep.Requests)
	}
	if rep.Stages[0].From != 0 || rep.Stages[2].From != 50 || rep.Stages[2].Target != 0 {
		t.Errorf("stage loads: %+v %+v", rep.Stages[0], rep.Stages[2])
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "0→50/s") || !strings.Contains(b.String(), "50→0/s") {
		t.Errorf("text report without the stages:\n%s", b.String())
	}
}

// TestStagesCountByIntendedTime: a stage's requests, in all and per
// series, and its dropped arrivals are those due in its time, to the one:
// the arrival due at a stage's very end (here the 10th and the 30th: a
// ramp of 0→50/s over 400ms holds 10) belongs to the next stage, however
// the mark of that end and the arrival's send (or drop) race. (A
// capacity step at 10/s for 10s after its warm-up measured 99, and its
// search was of low confidence whatever the server did; per series and
// dropped, [10 21 9] and [10 20 9] came before.) With one request in
// flight at most and a call longer than the run, every arrival but the
// first is dropped.
func TestStagesCountByIntendedTime(t *testing.T) {
	url := refHTTP(t, refserver.HTTPConfig{})
	const stage = 400 * time.Millisecond
	tests := []struct {
		name    string
		call    string
		series  string
		opts    []Option
		sent    []int64 // in all and in series
		dropped []int64
	}{
		{"ping", "ping", "ping", nil, []int64{10, 20, 10}, []int64{0, 0, 0}},
		{"dropped", `tools/call sleep {"ms":1500}`, "tools/call sleep", []Option{WithMaxInFlight(1)},
			[]int64{1, 0, 0}, []int64{9, 20, 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for round := range 3 {
				opts := append([]Option{WithStages([]Stage{{stage, 50, true}, {stage, 50, true}, {stage, 0, true}})}, tt.opts...)
				rep, err := Run(context.Background(), Target{URL: url}, mustCalls(t, tt.call), opts...)
				if err != nil {
					t.Fatal(err)
				}
				var sent, series, dropped, errs []int64
				for _, st := range rep.Stages {
					f := st.Figures
					sent, dropped = append(sent, f.Requests), append(dropped, f.Dropped)
					var n, e int64
					if s := f.Find(tt.series); s != nil {
						n = s.Requests
					}
					for _, ec := range f.Errors {
						if ec.Class == ClassDropped {
							e += ec.Count
						}
					}
					series, errs = append(series, n), append(errs, e)
				}
				if !slices.Equal(sent, tt.sent) || !slices.Equal(series, tt.sent) || !slices.Equal(dropped, tt.dropped) || !slices.Equal(errs, tt.dropped) {
					t.Errorf("round %d: stages sent %v, %s %v, dropped %v (errors %v); want %v, %v, %v",
						round, sent, tt.series, series, dropped, errs, tt.sent, tt.sent, tt.dropped)
				}
			}
		})
	}
}

// TestFindMaxWarmupHolds: a capacity step's warm-up sends at the step's
// rate from its first instant (a hold, as vegeta's and k6's warm-ups; a
// ramp from 0 would send half as many), and the step's figures are those
// of the measured stage alone.
func TestFindMaxWarmupHolds(t *testing.T) {
	url := refHTTP(t, refserver.HTTPConfig{})
	cfg := FindMaxConfig{Step: 500 * time.Millisecond, Warmup: 500 * time.Millisecond}.withDefaults()
	rep, err := runStep(context.Background(), Target{URL: url}, mustCalls(t, "ping"), cfg, 40, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Stages) != 2 {
		t.Fatalf("%d stages, want the warm-up and the measured one", len(rep.Stages))
	}
	for i, st := range rep.Stages {
		if st.From != 40 || st.Target != 40 || st.Figures.Requests != 20 {
			t.Errorf("stage %d: %g/s to %g/s, %d requests; want a hold at 40/s, 20 requests", i+1, st.From, st.Target, st.Figures.Requests)
		}
	}
	if f := rep.Figures(); f.Requests != 20 || f.Rate != 40 {
		t.Errorf("step figures: %d requests at %g/s, want those of the measured stage (20 at 40/s)", f.Requests, f.Rate)
	}
}

// TestStagesClosed checks that a closed-model session sends nothing while
// the target is at or below its number: two stages at 0 sessions send
// nothing, the third (ramping to 2) does. Only the first stage is held to
// 0 exactly: the second is a margin for a mark taken late.
func TestStagesClosed(t *testing.T) {
	url := refHTTP(t, refserver.HTTPConfig{})
	stages := []Stage{{300 * time.Millisecond, 0, false}, {300 * time.Millisecond, 0, false}, {400 * time.Millisecond, 2, false}}
	rep, err := Run(context.Background(), Target{URL: url}, mustCalls(t, "ping"), WithStages(stages), WithThink(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Sessions != 2 || rep.Model != "closed" || len(rep.Stages) != 3 {
		t.Fatalf("sessions %d model %s stages %d", rep.Sessions, rep.Model, len(rep.Stages))
	}
	if n := rep.Stages[0].Figures.Requests; n != 0 {
		t.Errorf("%d requests sent while the target was 0", n)
	}
	if n := rep.Stages[2].Figures.Requests; n == 0 || n < rep.Requests/2 {
		t.Errorf("stage 3 sent %d of %d", n, rep.Requests)
	}
	if rep.Stages[0].Figures.Setups != 0 {
		t.Errorf("%d sessions set up before their stage", rep.Stages[0].Figures.Setups)
	}
}

// TestIntervals checks the intervals a report records: they tile the
// run, their counts add up to the run's, their series have percentiles
// and histograms, and they survive a JSON round trip.
func TestIntervals(t *testing.T) {
	url := refHTTP(t, refserver.HTTPConfig{})
	rep, err := Run(context.Background(), Target{URL: url}, mustCalls(t, `tools/call echo {"message":"x"}`),
		WithRate(100), WithDuration(time.Second), WithIntervals(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rep.Intervals); n < 4 || n > 7 {
		t.Fatalf("%d intervals of 200ms in a 1s run", n)
	}
	var sent, answered int64
	var next time.Duration
	for i, in := range rep.Intervals {
		sent += in.Requests
		answered += in.Answered
		if d := in.Offset - next; d < -time.Millisecond || d > time.Millisecond {
			t.Errorf("interval %d starts at %v, the previous ended at %v", i, in.Offset, next)
		}
		next = in.Offset + in.Duration
		for _, s := range in.Series {
			if s.Count > 0 && (s.P50 <= 0 || s.P99 < s.P50 || s.Max < s.P99 || s.Histogram == "") {
				t.Errorf("interval %d series %s: %+v", i, s.Name, s)
			}
		}
	}
	if sent != rep.Requests || answered != rep.Answered {
		t.Errorf("intervals hold %d sent %d answered, the run %d %d", sent, answered, rep.Requests, rep.Answered)
	}
	// every latency of a request series is in exactly one interval
	for _, name := range []string{"tools/call", "tools/call echo"} {
		merged := newHist()
		for _, in := range rep.Intervals {
			for _, s := range in.Series {
				if s.Name == name {
					h, err := hdrhistogram.Decode([]byte(s.Histogram))
					if err != nil {
						t.Fatal(err)
					}
					merged.Merge(h)
				}
			}
		}
		run := rep.Find(name)
		if run == nil || merged.TotalCount() != run.Count || time.Duration(merged.Max()) != run.Max {
			t.Errorf("%s: intervals hold %d latencies (max %v), the run %+v", name, merged.TotalCount(), time.Duration(merged.Max()), run)
		}
	}
	var buf strings.Builder
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := ReadReport(strings.NewReader(buf.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Intervals) != len(rep.Intervals) || back.Intervals[1].Series[0].P99 != rep.Intervals[1].Series[0].P99 {
		t.Errorf("intervals after a round trip: %+v", back.Intervals)
	}
	if _, err := Run(context.Background(), Target{URL: url}, mustCalls(t, "ping"), WithDuration(time.Second), WithIntervals(time.Millisecond)); err == nil {
		t.Error("an interval of 1ms accepted")
	}
}

// TestIntervalRecorder: each interval's histograms hold the values
// recorded in it and no other, and once each series has its two
// histograms an interval allocates nothing (the report's intervals once
// copied every histogram of the run, twice, per interval).
func TestIntervalRecorder(t *testing.T) {
	var r intervalRecorder
	names := []string{"tools/call", "tools/call echo"}
	cycle := func(v int64, n int) map[string]int64 {
		for range n {
			r.record(names, v)
		}
		got := map[string]int64{}
		hists := r.take()
		for name, h := range hists {
			if h.TotalCount() > 0 && (h.Min() > v || h.Max() < v) {
				t.Errorf("%s: values %d..%d, recorded %d", name, h.Min(), h.Max(), v)
			}
			got[name] = h.TotalCount()
		}
		resetAll(hists)
		r.giveBack(hists)
		return got
	}
	for i, n := range []int{3, 5, 0, 7} {
		got := cycle(int64(1000*(i+1)), n)
		for _, name := range names {
			if got[name] != int64(n) {
				t.Errorf("interval %d: %s holds %d values, want %d", i, name, got[name], n)
			}
		}
	}
	if a := testing.AllocsPerRun(20, func() {
		r.record(names, 5000)
		hists := r.take()
		resetAll(hists)
		r.giveBack(hists)
	}); a != 0 {
		t.Errorf("an interval allocates %v times", a)
	}
}

// TestOpenRunLastsItsSchedule: an open-model run lasts its duration or its
// stages, not until its last arrival, so that its rates are those asked
// for: 2/s over 1.5 s is 3 arrivals (at 0, 0.5 and 1 s), 2/s, not 3/s over
// the 1 s to the last one; a ramp down to 0 over 0.6 s has its last
// arrival well before the stage's end.
func TestOpenRunLastsItsSchedule(t *testing.T) {
	url := refHTTP(t, refserver.HTTPConfig{})
	cases := []struct {
		name  string
		opts  []Option
		total time.Duration
		n     int64
	}{
		{"rate and duration", []Option{WithRate(2), WithDuration(1500 * time.Millisecond)}, 1500 * time.Millisecond, 3},
		{"a rate whose next arrival is beyond Duration's range", []Option{WithRate(1e-12), WithDuration(300 * time.Millisecond)}, 300 * time.Millisecond, 1},
		{"ramp down to 0", []Option{WithStages([]Stage{{600 * time.Millisecond, 10, true}, {600 * time.Millisecond, 0, true}})}, 1200 * time.Millisecond, 6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), c.total+10*time.Second)
			defer cancel()
			rep, err := Run(ctx, Target{URL: url}, mustCalls(t, "ping"), c.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Requests != c.n || rep.Answered != c.n {
				t.Fatalf("requests %d answered %d, want %d", rep.Requests, rep.Answered, c.n)
			}
			if rep.Duration < c.total {
				t.Errorf("run lasted %v, less than its schedule's %v", rep.Duration, c.total)
			}
			if len(rep.Stages) > 0 {
				last := rep.Stages[len(rep.Stages)-1].Figures
				if last.Duration < 590*time.Millisecond {
					t.Errorf("last stage lasted %v, less than its 600ms", last.Duration)
				}
			}
		})
	}
}
