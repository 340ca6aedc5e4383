package loadgen

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/refserver"
)

// TestMergeStagesAndIntervals: generators run with the same stages at the
// same time merge into one report that keeps the stages (each stage's
// figures the merge of the generators' figures of that stage) and the
// intervals (merged interval by interval), for the text report and the
// charts over time of 'mcptape report'; both were dropped.
func TestMergeStagesAndIntervals(t *testing.T) {
	url := refHTTP(t, refserver.HTTPConfig{})
	stages := []Stage{{300 * time.Millisecond, 40, true}, {300 * time.Millisecond, 40, true}}
	reps := make([]*Report, 2)
	var wg sync.WaitGroup
	errs := make([]error, len(reps))
	for i := range reps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			reps[i], errs[i] = Run(context.Background(), Target{URL: url}, mustCalls(t, "ping"),
				WithStages(stages), WithIntervals(100*time.Millisecond))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
		reps[i] = jsonRoundTrip(t, reps[i])
	}
	merged, err := Merge(reps...)
	if err != nil {
		t.Fatal(err)
	}
	merged = jsonRoundTrip(t, merged)
	if len(merged.Stages) != len(stages) {
		t.Fatalf("merged report has %d stages, want %d", len(merged.Stages), len(stages))
	}
	// the generators' loads add up: 2 × 40/s
	for i, st := range merged.Stages {
		want := reps[0].Stages[i].Figures.Requests + reps[1].Stages[i].Figures.Requests
		if st.Figures.Requests != want || st.Target != 80 || !st.Rate || st.Offset != reps[0].Stages[i].Offset {
			t.Errorf("stage %d: %d requests (want %d), target %v rate %v offset %v", i+1, st.Figures.Requests, want, st.Target, st.Rate, st.Offset)
		}
		p := st.Figures.Find("ping")
		if p == nil || p.Count != reps[0].Stages[i].Figures.Find("ping").Count+reps[1].Stages[i].Figures.Find("ping").Count {
			t.Errorf("stage %d: ping series %+v", i+1, p)
		}
	}
	if len(merged.Intervals) == 0 || merged.IntervalWidth != 100*time.Millisecond {
		t.Fatalf("merged report has %d intervals of %v", len(merged.Intervals), merged.IntervalWidth)
	}
	var answered, count int64
	for _, in := range merged.Intervals {
		answered += in.Answered
		for _, s := range in.Series {
			if s.Name == "ping" {
				count += s.Count
				if s.P99 <= 0 || s.Max < s.P99 {
					t.Errorf("interval at %v: ping p99 %v max %v", in.Offset, s.P99, s.Max)
				}
			}
		}
	}
	var want int64
	for _, r := range reps {
		for _, in := range r.Intervals {
			want += in.Answered
		}
	}
	if answered != want || count != want {
		t.Errorf("merged intervals: %d answered, %d ping answers; the generators' intervals: %d", answered, count, want)
	}
}

// TestMergeIntervalsLateCuts: the intervals of generators asked for the
// same width merge however late their cuts came (a generator descheduled
// on a loaded machine cuts its first interval at 160ms instead of 100ms:
// the widths its offsets show then differ by more than 10 %), and
// generators asked for other widths still give none. Reports written
// before the width was recorded still have it estimated from their
// offsets. The merge compared the first two offsets of each run, and
// dropped every interval of generators stalled that way.
func TestMergeIntervalsLateCuts(t *testing.T) {
	ms := time.Millisecond
	rep := func(width time.Duration, offsets ...time.Duration) *Report {
		r := &Report{Format: ReportFormat, Model: "open", IntervalWidth: width}
		for _, o := range offsets {
			r.Intervals = append(r.Intervals, Interval{Offset: o, Duration: 100 * ms, Requests: 1, Answered: 1, OK: 1})
		}
		return r
	}
	for _, tt := range []struct {
		name    string
		reports []*Report
		want    int // merged intervals
	}{
		{"on time", []*Report{rep(100*ms, 0, 100*ms, 200*ms), rep(100*ms, 0, 100*ms, 200*ms)}, 3},
		{"a late cut", []*Report{rep(100*ms, 0, 100*ms, 200*ms), rep(100*ms, 5*ms, 165*ms, 200*ms, 300*ms)}, 4},
		{"other widths", []*Report{rep(100*ms, 0, 100*ms, 200*ms), rep(200*ms, 0, 200*ms)}, 0},
		{"older reports, same widths", []*Report{rep(0, 0, 100*ms), rep(0, 0, 105*ms)}, 2},
		{"older reports, other widths", []*Report{rep(0, 0, 100*ms), rep(0, 0, 200*ms)}, 0},
		{"an older report beside", []*Report{rep(100*ms, 0, 160*ms), rep(0, 0, 100*ms)}, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Merge(tt.reports...)
			if err != nil {
				t.Fatal(err)
			}
			if len(m.Intervals) != tt.want {
				t.Fatalf("%d merged intervals, want %d", len(m.Intervals), tt.want)
			}
			if tt.want > 0 && m.Intervals[0].Requests != 2 {
				t.Errorf("first merged interval %+v, want both generators' requests", m.Intervals[0])
			}
			if w := tt.reports[0].IntervalWidth; tt.want > 0 && m.IntervalWidth != w {
				t.Errorf("merged width %v, want %v", m.IntervalWidth, w)
			}
			if m, err = Merge(jsonRoundTrip(t, tt.reports[0]), jsonRoundTrip(t, tt.reports[1])); err != nil || len(m.Intervals) != tt.want {
				t.Errorf("read back from JSON: %d merged intervals (%v), want %d", len(m.Intervals), err, tt.want)
			}
		})
	}
}
