package loadgen

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram bounds: nanoseconds from 1 ns to one hour, 3 significant
// digits. Longer latencies are recorded as one hour.
const (
	histMin     = 1
	histMax     = int64(time.Hour)
	histSigFigs = 3
)

// SetupSeries is the name of the series of session setups (initialize,
// its answer and notifications/initialized).
const SetupSeries = "session setup"

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(histMin, histMax, histSigFigs) }

// stats collects the figures of a run. It is shared by every session and
// guarded by one mutex: recording is a few hundred nanoseconds, far below
// the cost of the exchange it measures.
type stats struct {
	mu            sync.Mutex
	series        map[string]*hdrhistogram.Histogram
	errors        map[errKey]int64
	counts        map[string]*seriesCounts // requests and errors per series
	reqErrs       int64                    // errors of requests (setups excluded)
	errAnswers    int64                    // requests answered with an error (counted in reqErrs too)
	sent          int64                    // requests sent (setup excluded)
	done          int64                    // requests answered
	dropped       int64                    // open model: arrivals not sent (max in flight reached)
	inflt         inflight                 // requests in flight
	setups        int64
	prog          progressStats
	cancel        cancelStats
	batches       map[string]int64  // batch outcomes
	get           getStats          // WithGetStream
	ilog          *intervalLog      // WithHlog
	iv            *intervalRecorder // WithIntervals: the current interval's latencies
	exits         map[string]int64  // stdio servers that exited, by status
	setupErrs     map[errKey]int64  // errors of session setups, for Report.Failure
	outage        outage            // the server unreachable
	lastTransport string            // the latest transport error, for Report.Failure
	// stageEnds are the ends of the stages but the last (WithStages) and
	// stages their figures counted by intended time (stagecount.go).
	stageEnds []time.Time
	stages    []stageCounts

	// late is the most an open-model arrival was sent after its time since
	// the last stage mark (mark swaps it), lateRun the same over the run;
	// nanoseconds, raised by the one goroutine that schedules arrivals.
	late, lateRun atomic.Int64
}

// errKey is one error class with its detail (status code, error code...).
type errKey struct{ class, detail string }

func newStats() *stats {
	return &stats{series: make(map[string]*hdrhistogram.Histogram), errors: make(map[errKey]int64),
		counts: make(map[string]*seriesCounts), exits: make(map[string]int64), setupErrs: make(map[errKey]int64)}
}

// record adds one latency to each of the named series.
func (s *stats) record(names []string, d time.Duration) {
	v := clampLatency(d)
	s.mu.Lock()
	s.recordLocked(names, v)
	ilog := s.ilog
	s.mu.Unlock()
	if ilog != nil {
		ilog.record(names, v)
	}
}

// answered counts one answered request, no longer in flight, whose
// latency started at start and ended at at, and records that latency in
// each of the named series, under one lock.
func (s *stats) answered(names []string, start, at time.Time) {
	v := clampLatency(at.Sub(start))
	s.mu.Lock()
	s.inflt.add(start, -1)
	s.done++
	s.recordLocked(names, v)
	s.outage.upLocked()
	ilog := s.ilog
	s.mu.Unlock()
	if ilog != nil {
		ilog.record(names, v)
	}
}

// clampLatency returns d in nanoseconds within the histograms' bounds.
func clampLatency(d time.Duration) int64 {
	return min(max(int64(d), histMin), histMax)
}

// recordLocked adds v to each of the named series; s.mu is held.
func (s *stats) recordLocked(names []string, v int64) {
	for _, n := range names {
		h := s.series[n]
		if h == nil {
			h = newHist()
			s.series[n] = h
		}
		_ = h.RecordValue(v) // in range by construction
	}
	if s.iv != nil {
		s.iv.record(names, v)
	}
}

// setUp counts one session set up (an answer: the server is reachable).
func (s *stats) setUp() {
	s.mu.Lock()
	s.setups++
	s.outage.upLocked()
	s.mu.Unlock()
}

// unsend takes back a request counted as sent in the named series: one
// cut off at the run's bound, neither answered nor failed.
func (s *stats) unsend(names []string) {
	s.mu.Lock()
	if isRequestSeries(names) {
		s.sent--
	}
	for _, n := range names {
		s.seriesCountsLocked(n).requests--
	}
	s.mu.Unlock()
}

// drop counts an open-model arrival due at intended dropped: a request
// error.
func (s *stats) drop(intended time.Time) {
	s.mu.Lock()
	s.dropped++
	if c := s.stageLocked(intended); c != nil {
		c.dropped++
	}
	s.reqErrs++
	s.failLocked(nil, ClassDropped, detailMaxInFlight)
	s.mu.Unlock()
}

// noteLate notes that an open-model arrival was sent d after its time:
// the generator's own lateness (a descheduled process, a loaded machine),
// which the open model does not wait for the server to cause.
func (s *stats) noteLate(d time.Duration) {
	raiseMax(&s.late, int64(d))
	raiseMax(&s.lateRun, int64(d))
}

// raiseMax sets a to v when v is greater.
func raiseMax(a *atomic.Int64, v int64) {
	for cur := a.Load(); v > cur; cur = a.Load() {
		if a.CompareAndSwap(cur, v) {
			return
		}
	}
}

// flying counts k requests whose latency started at start as in flight
// (k < 0: no longer, unanswered).
func (s *stats) flying(start time.Time, k int64) {
	s.mu.Lock()
	s.inflt.add(start, k)
	s.mu.Unlock()
}

// add changes a counter under the lock.
func (s *stats) add(p *int64, n int64) {
	s.mu.Lock()
	*p += n
	s.mu.Unlock()
}

// snapshot is a point-in-time view for live progress.
type snapshot struct {
	Sent, Done, Errors, Dropped, InFlight, Setups int64
	// ErrorAnswers, RequestErrors and Cancelled are the stats' errAnswers,
	// reqErrs and cancel.sent.
	ErrorAnswers, RequestErrors, Cancelled int64
	P99                                    time.Duration
	// Oldest is the age of the oldest request in flight.
	Oldest time.Duration
}

// snap returns the live figures; p99 is over every request series.
func (s *stats) snap() snapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := snapshot{Sent: s.sent, Done: s.done, Dropped: s.dropped, InFlight: s.inflt.n, Setups: s.setups,
		ErrorAnswers: s.errAnswers, RequestErrors: s.reqErrs, Cancelled: s.cancel.sent, Oldest: s.inflt.oldest(time.Now())}
	for _, n := range s.errors {
		out.Errors += n
	}
	var p99 int64
	for name, h := range s.series {
		if name != SetupSeries {
			if v := h.ValueAtPercentile(99); v > p99 {
				p99 = v
			}
		}
	}
	out.P99 = time.Duration(p99)
	return out
}

// errorList returns the error counts sorted by class then detail.
func (s *stats) errorList() []ErrorCount {
	out := make([]ErrorCount, 0, len(s.errors))
	for k, n := range s.errors {
		out = append(out, ErrorCount{Class: k.class, Detail: k.detail, Count: n})
	}
	sortErrors(out)
	return out
}

func sortErrors(e []ErrorCount) {
	sort.Slice(e, func(i, j int) bool {
		if e[i].Class != e[j].Class {
			return e[i].Class < e[j].Class
		}
		return e[i].Detail < e[j].Detail
	})
}
