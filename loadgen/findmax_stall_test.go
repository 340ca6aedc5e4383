package loadgen

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/refserver"
)

// fakeSteps is a step runner over a simulated server of a known capacity:
// a step at or below it answers in 10 ms, one above it in 500 ms. stalls
// injects, for the n-th run (from 0), a generator stall of that length:
// its latencies carry the stall, as latencies measured from the intended
// times do, and its report the generator's lateness.
type fakeSteps struct {
	capacity float64
	stalls   map[int]time.Duration
	rates    []float64 // the rate of each run, in order
}

func (f *fakeSteps) run(_ context.Context, rate float64) (*Report, error) {
	n := len(f.rates)
	f.rates = append(f.rates, rate)
	lat := 10 * time.Millisecond
	if rate > f.capacity {
		lat = 500 * time.Millisecond
	}
	stall := f.stalls[n]
	h := newHist()
	count := int64(rate * 2)
	for range count {
		if err := h.RecordValue(int64(lat + stall)); err != nil {
			return nil, err
		}
	}
	start := time.Unix(1_700_000_000, 0).Add(time.Duration(n) * 3 * time.Second)
	rep := &Report{Format: ReportFormat, Model: "open", Sessions: 2, Generators: 1, Started: start, Ended: start.Add(2 * time.Second), Duration: 2 * time.Second,
		Requests: count, Answered: count, OK: count, Rate: rate, GeneratorLate: stall, Series: []Series{{Name: "ping", Requests: count, hist: h}}}
	rep.fill()
	return rep, nil
}

// TestFindMaxRepeatsStalledStep: a step that broke its latency bound
// while the generator itself stalled is run once more, and the second
// run's verdict stands, so a stall below capacity does not make the
// search bisect below that step; a step that broke with the generator on
// time, or only a little late, is not run again.
func TestFindMaxRepeatsStalledStep(t *testing.T) {
	th, err := ParseThreshold("ping:p90<100ms")
	if err != nil {
		t.Fatal(err)
	}
	cfg := FindMaxConfig{Thresholds: []Threshold{th}, Start: 10, MaxRate: 1000, Step: 2 * time.Second, Warmup: time.Second}.withDefaults()
	// with a capacity of 100/s the search runs 10, 20, 40, 80, 160 (broke),
	// then bisects 120 (broke), 100, 110 (broke), 105 (broke)
	for _, tc := range []struct {
		name     string
		stalls   map[int]time.Duration
		repeated []float64 // the rates of the steps run twice
	}{
		{"no stall", nil, nil},
		{"stall below capacity", map[int]time.Duration{2: 400 * time.Millisecond}, []float64{40}},
		{"stall above capacity", map[int]time.Duration{4: 400 * time.Millisecond}, []float64{160}},
		{"stall in the bisection", map[int]time.Duration{6: time.Second}, []float64{100}},
		{"small lateness above capacity", map[int]time.Duration{4: StallLate / 2}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeSteps{capacity: 100, stalls: tc.stalls}
			rep, err := findMax(context.Background(), cfg, f.run)
			if err != nil {
				t.Fatal(err)
			}
			cr := rep.Capacity
			var text, js bytes.Buffer
			if err := rep.WriteText(&text); err != nil {
				t.Fatal(err)
			}
			if err := rep.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			if !cr.Found || cr.Rate < 90 || cr.Rate > 100 || cr.Upper <= 100 {
				t.Errorf("capacity %g/s (upper %g/s), want 90-100/s\n%s", cr.Rate, cr.Upper, text.String())
			}
			var repeated []float64
			for _, s := range cr.Steps {
				if s.Repeated != "" {
					repeated = append(repeated, s.Rate)
					if !strings.Contains(s.Repeated, "ping:p90<100ms") || !strings.Contains(s.Repeated, "late") || s.GeneratorLate != 0 {
						t.Errorf("step %g/s: repeated %q, late %v", s.Rate, s.Repeated, s.GeneratorLate)
					}
				}
			}
			if !equalRates(repeated, tc.repeated) {
				t.Errorf("steps run again %v, want %v\n%s", repeated, tc.repeated, text.String())
			}
			if len(f.rates) != len(cr.Steps)+len(tc.repeated) || len(rep.Stages) != len(cr.Steps) {
				t.Errorf("%d runs, %d steps, %d stages: want a run per step and one more per step run again", len(f.rates), len(cr.Steps), len(rep.Stages))
			}
			if n := strings.Count(text.String(), "run again: the first run broke"); n != len(tc.repeated) {
				t.Errorf("text report names %d steps run again, want %d:\n%s", n, len(tc.repeated), text.String())
			}
			if n := strings.Count(js.String(), `"repeated": "the first run broke`); n != len(tc.repeated) {
				t.Errorf("JSON report names %d steps run again, want %d", n, len(tc.repeated))
			}
		})
	}
}

func equalRates(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestGeneratorLate: a stall of the open model's scheduler (injected as
// it sends one arrival) is the generator's lateness, in the run's report
// and in the figures of the stage it fell in.
func TestGeneratorLate(t *testing.T) {
	const stall = 300 * time.Millisecond
	url := refHTTP(t, refserver.HTTPConfig{})
	stages := []Stage{{300 * time.Millisecond, 50, true}, {600 * time.Millisecond, 50, true}}
	hook := func(o *options) error {
		o.stall = func(k uint64) {
			if k == 20 { // due at 400 ms: in the second stage
				time.Sleep(stall)
			}
		}
		return nil
	}
	rep, err := Run(context.Background(), Target{URL: url}, mustCalls(t, "ping"), WithSessions(2), WithStages(stages), withStageStart(50), hook)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Stages) != 2 {
		t.Fatalf("%d stages, want 2", len(rep.Stages))
	}
	if late := rep.Stages[1].Figures.GeneratorLate; late < stall || rep.GeneratorLate < late {
		t.Errorf("generator late %v in the run, %v in the second stage, want at least %v", rep.GeneratorLate, late, stall)
	}
}

// TestFindMaxText: the text report of a capacity search describes its
// steps as steps (the rates tried, each one's verdict with the threshold
// it broke and what was measured, the capacity found), not as one run
// in stages at its peak rate with sessions set up across steps.
func TestFindMaxText(t *testing.T) {
	th, err := ParseThreshold("ping:p90<100ms")
	if err != nil {
		t.Fatal(err)
	}
	cfg := FindMaxConfig{Thresholds: []Threshold{th}, Start: 10, MaxRate: 1000, Step: 2 * time.Second, Warmup: time.Second, Precision: 0.3}.withDefaults()
	f := &fakeSteps{capacity: 50} // 10, 20, 40, 80 (broke), then 60 (broke), 50
	rep, err := findMax(context.Background(), cfg, f.run)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{
		"model     capacity search, open model, 2 sessions per step, 6 steps from 10/s to 80/s\n",
		"requests  520 sent: 520 ok (100.00%), 0 error answers (0.00%), 0 no answer (0.00%)\n" +
			"          0 dropped, never sent (0.00% of 520 arrivals); 0 not ok (0.00%); in all steps with their warm-ups\n",
		"capacity  50/s held every threshold; 60/s broke one (bracket 20.0%)\n",
		"held\n",
		"broke ping:p90<100ms (measured 500ms)\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q:\n%s", want, text)
		}
	}
	for _, not := range []string{"arrivals/s", "at the peak", "stage", "set up", "failed: measured", "broke:"} {
		if strings.Contains(text, not) {
			t.Errorf("text report holds %q:\n%s", not, text)
		}
	}
}

// TestCapacityFigures: the figures behind --find-max --hgrm are those of
// the step at the highest rate that held, with their histograms; none
// when no rate held.
func TestCapacityFigures(t *testing.T) {
	th, err := ParseThreshold("ping:p90<100ms")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		capacity float64
		want     int64 // requests of the figures' ping series, 0 for none
	}{
		{"held up to 50/s", 50, 100}, // 10, 20, 40, 80 (broke), 60 (broke), 50
		{"none held", 5, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := FindMaxConfig{Thresholds: []Threshold{th}, Start: 10, MaxRate: 1000, Step: 2 * time.Second, Precision: 0.3}.withDefaults()
			rep, err := findMax(context.Background(), cfg, (&fakeSteps{capacity: tc.capacity}).run)
			if err != nil {
				t.Fatal(err)
			}
			fig := rep.CapacityFigures()
			if tc.want == 0 {
				if fig != nil {
					t.Fatalf("figures at %g/s, want none", fig.Rate)
				}
				return
			}
			if fig == nil || fig.Rate != rep.Capacity.Rate {
				t.Fatalf("figures %+v, want those at %g/s", fig, rep.Capacity.Rate)
			}
			s := fig.Find("ping")
			h, err := s.Hist()
			if err != nil || s.Requests != tc.want || h.TotalCount() != tc.want || h.Max() > int64(100*time.Millisecond) {
				t.Errorf("ping: %d requests, histogram of %d up to %d (%v); want %d, all fast", s.Requests, h.TotalCount(), h.Max(), err, tc.want)
			}
			dir := t.TempDir()
			if err := fig.WriteHgrmDir(dir); err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(filepath.Join(dir, "ping.hgrm")); err != nil || !bytes.Contains(b, []byte("Total count    =          100]")) {
				t.Errorf("ping.hgrm (%v):\n%s", err, b)
			}
		})
	}
}

// TestFindMaxIntervalsOnce: the search's report holds the steps'
// intervals one after the other, each once. It began with the steps'
// intervals merged as if the steps had run at once (their nth intervals
// summed), then the steps' own: every request counted twice.
func TestFindMaxIntervalsOnce(t *testing.T) {
	th, err := ParseThreshold("ping:p90<100ms")
	if err != nil {
		t.Fatal(err)
	}
	cfg := FindMaxConfig{Thresholds: []Threshold{th}, Start: 10, MaxRate: 40, Step: 2 * time.Second, Warmup: time.Second}.withDefaults()
	f := &fakeSteps{capacity: 100}
	var steps int64
	rep, err := findMax(context.Background(), cfg, func(ctx context.Context, rate float64) (*Report, error) {
		rep, err := f.run(ctx, rate)
		if err != nil {
			return nil, err
		}
		for i := range 3 {
			rep.Intervals = append(rep.Intervals, Interval{Offset: time.Duration(i) * time.Second, Duration: time.Second, Requests: 1, Answered: 1, OK: 1})
		}
		rep.IntervalWidth = time.Second
		steps++
		return rep, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var answered int64
	for i, in := range rep.Intervals {
		answered += in.Answered
		if i > 0 && in.Offset <= rep.Intervals[i-1].Offset {
			t.Errorf("interval %d at %v, after one at %v", i+1, in.Offset, rep.Intervals[i-1].Offset)
		}
	}
	if steps != 3 || len(rep.Intervals) != 3*3 || answered != 3*3 {
		t.Errorf("%d steps: %d intervals, %d answered; want 3 per step, each once", steps, len(rep.Intervals), answered)
	}
}
