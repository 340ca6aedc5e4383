package loadgen

import (
	"time"
)

// Stage figures by intended time. A stage's figures are the difference of
// the marks taken at its ends (window.go), but what is decided at a
// request's intended time (the open model's arrivals: sent or dropped) is
// counted in the stage of that time: an arrival due at a stage's very end
// is the next stage's, though it may be sent or dropped a moment before
// the timer takes the mark of that end (both fire at that instant). So the
// requests of a stage, in all and per series, and its dropped arrivals are
// those due in its time; answers, errors and latencies, which come when
// the server answers, stay those of the marks.

// stageCounts are the figures of one stage counted by intended time.
type stageCounts struct {
	sent, dropped int64
	series        map[string]int64 // requests sent per series
}

// startStages prepares counting the requests of each stage of a run
// started at start whose stages end at the offsets ends (all but the last).
func (s *stats) startStages(start time.Time, ends []time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stageEnds = make([]time.Time, len(ends))
	for i, e := range ends {
		s.stageEnds[i] = start.Add(e)
	}
	s.stages = make([]stageCounts, len(ends)+1)
}

// stageLocked returns the counts of the stage of intended time, nil
// without stages; s.mu is held.
func (s *stats) stageLocked(intended time.Time) *stageCounts {
	if s.stages == nil {
		return nil
	}
	i := 0
	for i < len(s.stageEnds) && !intended.Before(s.stageEnds[i]) {
		i++
	}
	return &s.stages[i]
}

// sentLocked counts requests sent, due at intended: one for each element
// of names, the series of that request. s.mu is held.
func (s *stats) sentLocked(intended time.Time, names ...[]string) {
	s.sent += int64(len(names))
	c := s.stageLocked(intended)
	if c != nil {
		c.sent += int64(len(names))
		if c.series == nil {
			c.series = make(map[string]int64)
		}
	}
	for _, ns := range names {
		for _, n := range ns {
			s.seriesCountsLocked(n).requests++
			if c != nil {
				c.series[n]++
			}
		}
	}
}

// countStages sets the figures of stages counted by intended time: the
// requests, per series too, and the dropped arrivals (with the request
// errors they are).
func (s *stats) countStages(stages []StageReport) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stages == nil {
		return
	}
	counted := map[string]bool{} // the series of requests sent by intended time
	for _, c := range s.stages {
		for n := range c.series {
			counted[n] = true
		}
	}
	for i := range stages {
		if i < len(s.stages) {
			s.stages[i].apply(stages[i].Figures, counted)
		}
	}
}

// apply puts c's figures in f, a stage's report from its marks; counted
// names the series whose requests c counts.
func (c *stageCounts) apply(f *Report, counted map[string]bool) {
	f.Requests = c.sent
	have := map[string]bool{}
	kept := f.Series[:0]
	for _, sr := range f.Series {
		have[sr.Name] = true
		if counted[sr.Name] {
			sr.Requests = c.series[sr.Name]
			if sr.Requests == 0 && sr.Errors == 0 && sr.Count == 0 {
				continue
			}
		}
		kept = append(kept, sr)
	}
	f.Series = kept
	added := false
	for n, k := range c.series {
		if !have[n] && k > 0 {
			f.Series = append(f.Series, Series{Name: n, Requests: k, hist: newHist()})
			added = true
		}
	}
	if added {
		f.fill()
	}
	if d := c.dropped - f.Dropped; d != 0 {
		f.Dropped, f.RequestErrors, f.ErrorTotal = c.dropped, f.RequestErrors+d, f.ErrorTotal+d
		f.Errors = addErrorCount(f.Errors, ClassDropped, detailMaxInFlight, d)
	}
}

// addErrorCount adds d to the count of class and detail in e, keeping it
// sorted and without empty counts.
func addErrorCount(e []ErrorCount, class, detail string, d int64) []ErrorCount {
	for i := range e {
		if e[i].Class == class && e[i].Detail == detail {
			if e[i].Count += d; e[i].Count <= 0 {
				e = append(e[:i], e[i+1:]...)
			}
			return e
		}
	}
	if d > 0 {
		e = append(e, ErrorCount{Class: class, Detail: detail, Count: d})
		sortErrors(e)
	}
	return e
}
