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
	if len(merged.Intervals) == 0 {
		t.Fatal("merged report has no intervals")
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
