package loadgen

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// DefaultInterval is the width of the intervals a run's report records
// (Report.Intervals).
const DefaultInterval = time.Second

// Interval is the figures of one interval of a run, for charts over
// time: the requests counted in it (sent, answered, failed) and, per
// series, the latencies of the answers that came in it.
type Interval struct {
	// Offset is the interval's start from the start of the run.
	Offset   time.Duration `json:"offset_ns"`
	Duration time.Duration `json:"duration_ns"`
	Requests int64         `json:"requests"`
	Answered int64         `json:"answered"`
	Errors   int64         `json:"errors"` // request errors, dropped arrivals included
	Dropped  int64         `json:"dropped,omitempty"`
	// Series holds the series with answers or errors in the interval,
	// each with its histogram (HdrHistogram V2 compressed, base64), as in
	// an HdrHistogram interval log.
	Series []IntervalSeries `json:"series,omitempty"`
}

// IntervalSeries is one series in one interval.
type IntervalSeries struct {
	Name      string        `json:"name"`
	Count     int64         `json:"count"`
	Errors    int64         `json:"errors,omitempty"`
	P50       time.Duration `json:"p50_ns"`
	P90       time.Duration `json:"p90_ns"`
	P99       time.Duration `json:"p99_ns"`
	Max       time.Duration `json:"max_ns"`
	Histogram string        `json:"histogram"`
}

// WithIntervals sets the width of the intervals the report records
// (default DefaultInterval); 0 records none.
func WithIntervals(d time.Duration) Option {
	return func(o *options) error {
		if d < 0 || (d > 0 && d < 10*time.Millisecond) {
			return errors.New("interval: want 0 (none) or at least 10ms")
		}
		o.interval = d
		return nil
	}
}

// intervals takes a mark every interval of a run and keeps the figures
// between consecutive marks.
type intervals struct {
	mu    sync.Mutex
	start time.Time
	prev  *mark
	out   []Interval
	done  chan struct{}
	wg    sync.WaitGroup
}

// recordIntervals starts recording the intervals of the run (from
// r.start) when WithIntervals asks for them; the returned function stops
// and returns them.
func (r *runner) recordIntervals() func() []Interval {
	if r.o.interval <= 0 {
		return func() []Interval { return nil }
	}
	iv := startIntervals(r.st, r.start, r.o.interval, r.o.model())
	return func() []Interval { return iv.stop(r.st, r.o.model()) }
}

// startIntervals records the intervals of the run st measures from start.
func startIntervals(st *stats, start time.Time, every time.Duration, model string) *intervals {
	iv := &intervals{start: start, prev: st.mark(), done: make(chan struct{})}
	iv.wg.Add(1)
	go func() {
		defer iv.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				iv.add(st.mark(), model)
			case <-iv.done:
				return
			}
		}
	}()
	return iv
}

// add records the interval from the previous mark to m.
func (iv *intervals) add(m *mark, model string) {
	iv.mu.Lock()
	defer iv.mu.Unlock()
	w := window(iv.prev, m, model)
	in := Interval{Offset: iv.prev.at.Sub(iv.start), Duration: w.Duration, Requests: w.Requests, Answered: w.Answered,
		Errors: w.RequestErrors, Dropped: w.Dropped}
	for _, s := range w.Series {
		if s.Count == 0 && s.Errors == 0 {
			continue
		}
		in.Series = append(in.Series, IntervalSeries{Name: s.Name, Count: s.Count, Errors: s.Errors,
			P50: s.P50, P90: s.P90, P99: s.P99, Max: s.Max, Histogram: s.Histogram})
	}
	iv.out = append(iv.out, in)
	iv.prev = m
}

// stop ends the recording with a last interval up to now.
func (iv *intervals) stop(st *stats, model string) []Interval {
	close(iv.done)
	iv.wg.Wait()
	iv.add(st.mark(), model)
	return iv.out
}

// checkIntervals checks what a report read from JSON says of its
// intervals.
func checkIntervals(rep *Report) error {
	for i, in := range rep.Intervals {
		if in.Duration < 0 || in.Offset < 0 {
			return fmt.Errorf("interval %d: negative offset or duration", i+1)
		}
	}
	return nil
}
