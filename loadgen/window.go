package loadgen

import (
	"maps"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// A mark is the run's cumulative figures at one moment. The figures of a
// window of time (a stage, a capacity-search step after its warm-up) are
// the difference of the marks at its ends, so that recording a request
// costs nothing more however many windows are asked for.
type mark struct {
	at                           time.Time
	sent, done, reqErrs, dropped int64
	errAnswers, setups           int64
	hists                        map[string]*hdrhistogram.Snapshot
	counts                       map[string]seriesCounts
	errors                       map[errKey]int64
	late                         time.Duration // stage marks: the generator's lateness since the previous one
}

// mark takes the run's cumulative figures now, for the stage marks, with
// the generator's lateness since the previous one.
func (s *stats) mark() *mark {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.markLocked(true)
	m.late = time.Duration(s.late.Swap(0))
	return m
}

// markLocked takes the run's cumulative figures, the histograms only when
// hists (a copy of each: the cost of a mark); s.mu is held.
func (s *stats) markLocked(hists bool) *mark {
	m := &mark{at: time.Now(), sent: s.sent, done: s.done, reqErrs: s.reqErrs, dropped: s.dropped, setups: s.setups,
		errAnswers: s.errAnswers, counts: make(map[string]seriesCounts, len(s.counts)), errors: maps.Clone(s.errors)}
	if hists {
		m.hists = make(map[string]*hdrhistogram.Snapshot, len(s.series))
		for n, h := range s.series {
			m.hists[n] = h.Export()
		}
	}
	for n, c := range s.counts {
		m.counts[n] = *c
	}
	return m
}

// window returns the figures between marks a and b (a before b) as a
// report of the requests counted in that time: sent, answered or failed.
// The latencies are the difference of the marks' histograms, or, when
// hists is not nil, those of hists: the histograms of that time alone
// (intervalRecorder), used as they are.
func window(a, b *mark, model string, hists map[string]*hdrhistogram.Histogram) *Report {
	rep := &Report{Format: ReportFormat, Model: model, Generators: 1, Started: a.at, Ended: b.at, Duration: b.at.Sub(a.at),
		Requests: b.sent - a.sent, Answered: b.done - a.done, RequestErrors: b.reqErrs - a.reqErrs,
		Dropped: b.dropped - a.dropped, Setups: b.setups - a.setups, GeneratorLate: b.late,
		ErrorAnswers: b.errAnswers - a.errAnswers}
	rep.countOutcomes()
	for k, n := range b.errors {
		if d := n - a.errors[k]; d > 0 {
			rep.Errors = append(rep.Errors, ErrorCount{Class: k.class, Detail: k.detail, Count: d})
			rep.ErrorTotal += d
		}
	}
	sortErrors(rep.Errors)
	if hists == nil {
		hists = make(map[string]*hdrhistogram.Histogram, len(b.hists))
		for name, hb := range b.hists {
			snap := *hb
			snap.Counts = append([]int64(nil), hb.Counts...)
			if ha := a.hists[name]; ha != nil {
				for i := range min(len(ha.Counts), len(snap.Counts)) {
					snap.Counts[i] -= ha.Counts[i]
				}
			}
			hists[name] = hdrhistogram.Import(&snap)
		}
	}
	for name, h := range hists {
		c := b.counts[name]
		ca := a.counts[name]
		s := Series{Name: name, Requests: c.requests - ca.requests, Errors: c.errors - ca.errors, hist: h}
		if h.TotalCount() == 0 && s.Requests == 0 && s.Errors == 0 {
			continue
		}
		rep.Series = append(rep.Series, s)
	}
	for name, c := range b.counts {
		if hists[name] == nil {
			ca := a.counts[name]
			if r, e := c.requests-ca.requests, c.errors-ca.errors; r > 0 || e > 0 {
				rep.Series = append(rep.Series, Series{Name: name, Requests: r, Errors: e, hist: newHist()})
			}
		}
	}
	rep.fill()
	return rep
}

// StageReport is the figures of one stage (WithStages) or one step of a
// capacity search: the requests sent, answered or failed in its time.
type StageReport struct {
	// Stage numbers the stages from 1.
	Stage int `json:"stage"`
	// Offset is when the stage started, from the start of the run.
	Offset time.Duration `json:"offset_ns"`
	// From and Target are the load at its start and end: sessions, or
	// arrivals per second when Rate.
	From   float64 `json:"from"`
	Target float64 `json:"target"`
	Rate   bool    `json:"rate,omitempty"`
	// Figures holds the stage's counts, errors and series.
	Figures *Report `json:"figures"`
}

// marker takes marks at given offsets from the start of a run, from one
// goroutine, until stopped.
type marker struct {
	mu    sync.Mutex
	marks []*mark
	done  chan struct{}
	wg    sync.WaitGroup
}

// startMarker takes a mark now, then one at each offset from start (in
// increasing order) until stop.
func startMarker(st *stats, start time.Time, offsets []time.Duration) *marker {
	m := &marker{done: make(chan struct{}), marks: []*mark{st.mark()}}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		for _, off := range offsets {
			t := time.NewTimer(time.Until(start.Add(off)))
			select {
			case <-t.C:
				mk := st.mark()
				m.mu.Lock()
				m.marks = append(m.marks, mk)
				m.mu.Unlock()
			case <-m.done:
				t.Stop()
				return
			}
		}
	}()
	return m
}

// stop stops taking marks, takes the last one now, and returns them all.
func (m *marker) stop(st *stats) []*mark {
	close(m.done)
	m.wg.Wait()
	return append(m.marks, st.mark())
}

// stageOffsets returns the ends of the stages but the last (the last mark
// is taken when the run ends).
func (o *options) stageOffsets() []time.Duration {
	var out []time.Duration
	var at time.Duration
	for _, s := range o.stages[:max(len(o.stages)-1, 0)] {
		at += s.Duration
		out = append(out, at)
	}
	return out
}

// stageReports turns the marks taken at the stage ends into the stages'
// reports; a run cut short has fewer.
func (o *options) stageReports(marks []*mark, model string) []StageReport {
	var out []StageReport
	var off time.Duration
	prof := o.profile()
	for i := 0; i+1 < len(marks) && i < len(o.stages); i++ {
		st := o.stages[i]
		out = append(out, StageReport{Stage: i + 1, Offset: off, From: prof[i].from, Target: st.Target, Rate: st.Rate,
			Figures: window(marks[i], marks[i+1], model, nil)})
		off += st.Duration
	}
	return out
}
