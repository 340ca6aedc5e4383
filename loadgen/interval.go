package loadgen

import (
	"errors"
	"fmt"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
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
	// OK, ErrorAnswers and NoAnswer split the answered and failed
	// requests as Report's do (added later: derived for older reports).
	OK           int64 `json:"ok"`
	ErrorAnswers int64 `json:"error_answers,omitempty"`
	NoAnswer     int64 `json:"no_answer,omitempty"`
	Errors       int64 `json:"errors"` // requests not OK: ErrorAnswers + NoAnswer + Dropped
	Dropped      int64 `json:"dropped,omitempty"`
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

// intervalRecorder holds the latencies of the current interval, one
// histogram per series, recorded beside the run's cumulative histograms
// (as HdrHistogram's Recorder does): the end of an interval takes them
// as they are, instead of copying and diffing the run's histograms, and
// gives them back reset for a later interval, so that an interval
// allocates nothing once every series has its two histograms. It has no
// lock of its own: its owner's guards it.
type intervalRecorder struct {
	cur   map[string]*hdrhistogram.Histogram
	spare map[string]*hdrhistogram.Histogram // given back, reset; nil while taken
}

// record adds v to the current interval of each of the named series.
func (r *intervalRecorder) record(names []string, v int64) {
	for _, n := range names {
		h := r.cur[n]
		if h == nil {
			if r.cur == nil {
				r.cur = make(map[string]*hdrhistogram.Histogram)
			}
			h = newHist()
			r.cur[n] = h
		}
		_ = h.RecordValue(v) // in range by construction
	}
}

// take ends the current interval: it returns its histograms (series with
// nothing recorded in it included, empty) and starts the next with the
// histograms given back.
func (r *intervalRecorder) take() map[string]*hdrhistogram.Histogram {
	cur := r.cur
	r.cur, r.spare = r.spare, nil
	return cur
}

// giveBack returns histograms taken, once read, for a later interval.
// The caller resets them first, outside its lock.
func (r *intervalRecorder) giveBack(hists map[string]*hdrhistogram.Histogram) { r.spare = hists }

// resetAll empties every histogram of hists.
func resetAll(hists map[string]*hdrhistogram.Histogram) {
	for _, h := range hists {
		h.Reset()
	}
}

// intervals records the figures of each interval of a run: every
// interval, the counts between consecutive marks (taken without the
// histograms) and the latencies of the run's intervalRecorder.
type intervals struct {
	mu    sync.Mutex
	st    *stats
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
	return func() []Interval { return iv.stop(r.o.model()) }
}

// startIntervals records the intervals of the run st measures from start.
func startIntervals(st *stats, start time.Time, every time.Duration, model string) *intervals {
	st.mu.Lock()
	st.iv = &intervalRecorder{}
	prev := st.markLocked(false)
	st.mu.Unlock()
	iv := &intervals{st: st, start: start, prev: prev, done: make(chan struct{})}
	iv.wg.Add(1)
	go func() {
		defer iv.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				iv.add(model)
			case <-iv.done:
				return
			}
		}
	}()
	return iv
}

// add records the interval from the previous mark to now.
func (iv *intervals) add(model string) {
	iv.mu.Lock()
	defer iv.mu.Unlock()
	st := iv.st
	st.mu.Lock()
	m := st.markLocked(false)
	hists := st.iv.take()
	st.mu.Unlock()
	if hists == nil {
		hists = map[string]*hdrhistogram.Histogram{}
	}
	w := window(iv.prev, m, model, hists)
	in := Interval{Offset: iv.prev.at.Sub(iv.start), Duration: w.Duration, Requests: w.Requests, Answered: w.Answered,
		OK: w.OK, ErrorAnswers: w.ErrorAnswers, NoAnswer: w.NoAnswer, Errors: w.RequestErrors, Dropped: w.Dropped}
	for _, s := range w.Series {
		if s.Count == 0 && s.Errors == 0 {
			continue
		}
		in.Series = append(in.Series, IntervalSeries{Name: s.Name, Count: s.Count, Errors: s.Errors,
			P50: s.P50, P90: s.P90, P99: s.P99, Max: s.Max, Histogram: s.Histogram})
	}
	iv.out = append(iv.out, in)
	iv.prev = m
	resetAll(hists)
	st.mu.Lock()
	st.iv.giveBack(hists)
	st.mu.Unlock()
}

// stop ends the recording with a last interval up to now.
func (iv *intervals) stop(model string) []Interval {
	close(iv.done)
	iv.wg.Wait()
	iv.add(model)
	iv.st.mu.Lock()
	iv.st.iv = nil // what comes after the run (sessions closing) is in no interval
	iv.st.mu.Unlock()
	return iv.out
}

// intervalWidth is the IntervalWidth of a report with intervals ivs cut
// every width: none without intervals.
func intervalWidth(ivs []Interval, width time.Duration) time.Duration {
	if len(ivs) == 0 {
		return 0
	}
	return width
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

// deriveOutcomes sets OK, ErrorAnswers and NoAnswer of an interval of a
// report written before they were, as Report.deriveOutcomes does (an
// approximation: a request may be sent in one interval and answered in
// another).
func (in *Interval) deriveOutcomes() {
	r := Report{Requests: in.Requests, Answered: in.Answered, RequestErrors: in.Errors, Dropped: in.Dropped,
		OK: in.OK, ErrorAnswers: in.ErrorAnswers, NoAnswer: in.NoAnswer}
	r.deriveOutcomes()
	in.OK, in.ErrorAnswers, in.NoAnswer = r.OK, r.ErrorAnswers, r.NoAnswer
}
