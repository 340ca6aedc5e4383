package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptape/mcptape/transport"
)

// Live is the state of a run while it goes, for progress displays.
type Live struct {
	// Elapsed is the time since the measured phase started; Total is the
	// planned duration (0 when the run is bounded by a request count).
	Elapsed, Total time.Duration
	// Requests is the requests sent so far, Planned the --requests bound (0
	// if none) or, for RunTape, the requests the replayed recordings hold.
	Requests, Planned int64
	// OK, ErrorAnswers, NoAnswer and Cancelled (on purpose) count the
	// requests sent as the report's headline does (Report.OK...), Dropped
	// the open model's arrivals never sent; InFlight the requests still
	// in flight; Sessions the sessions set up so far. Answered is OK +
	// ErrorAnswers, Errors every error so far (setups' included).
	OK, ErrorAnswers, NoAnswer, Cancelled         int64
	Answered, Errors, Dropped, InFlight, Sessions int64
	// Rate is the ok requests per second so far, over the run less its
	// setup (the closed model's time before its first request), as the
	// report's ok/s is: the time spent opening sessions does not dilute it.
	Rate float64
	// P99 is the highest p99 among the request series so far: of the
	// answers, so that it hides a stall until the stalled requests are
	// answered. Oldest is the age of the oldest request in flight (from
	// its intended time, as its latency; 0 when none is, to within
	// 10 ms): it shows a stall while it lasts.
	P99    time.Duration
	Oldest time.Duration
}

// runner holds the state of one Run.
type runner struct {
	o      *options
	target Target
	st     *stats
	picker *picker
	work   context.Context // ends when the run is interrupted
	quit   atomic.Bool     // set when no new request may start
	claims atomic.Int64    // requests claimed (WithRequests)
	start  time.Time
	prof   profile // the load over time (open model, stages)
	// planned is the requests the run plans (RunTape: those of the
	// recordings, up to WithRequests), for Live.Planned; 0: o.requests.
	planned int64

	setupTmpls []*template // scenario setup steps

	versionOnce sync.Once
	version     string       // negotiated by the first session
	cancelSeq   atomic.Int64 // calls considered for cancellation

	watchers sync.WaitGroup // watches of cancelled calls (watchCancelled)

	// sendEnd is when the run stopped sending (stopSending), lastClaim
	// the latest request claimed (noteClaim); Unix nanoseconds, 0: not yet.
	sendEnd, lastClaim atomic.Int64
	// firstClaim is, in the closed model, the earliest request claimed
	// (noteFirstClaim): the end of the setup. Unix nanoseconds, 0: none.
	firstClaim atomic.Int64
	// measured is the measured duration once the run ended (its end
	// less its start, in nanoseconds), for the last live figures; 0
	// before.
	measured atomic.Int64
	// lastDone is, in a tape-driven run, when a request last left flight
	// (answered, failed, or given up at the bound): the measured end.
	lastDone atomic.Int64

	failMu  sync.Mutex
	failure string        // why the run was aborted (abort)
	aborted chan struct{} // closed by abort; nil: never
}

// stopping reports whether the run is ending.
func (r *runner) stopping() bool { return r.quit.Load() || r.work.Err() != nil }

// claim reserves one request (a batch with WithBatch) due at time at,
// reporting false when the run must not start another. The closed model
// passes the time of the send, the open model the intended time of the
// arrival: an arrival due within the duration is sent even when the
// generator runs late (a late generator must not shorten the schedule).
func (r *runner) claim(at time.Time) bool {
	if r.stopping() {
		return false
	}
	if r.o.duration > 0 && at.Sub(r.start) >= r.o.duration {
		r.stopSending(r.start.Add(r.o.duration))
		r.quit.Store(true)
		return false
	}
	if r.o.requests > 0 {
		if r.claims.Add(int64(max(r.o.batch, 1))) > r.o.requests {
			r.quit.Store(true)
			return false
		}
		r.noteClaim(at)
	}
	return true
}

// dial opens a connection to the target.
func (r *runner) dial(ctx context.Context) (transport.Conn, error) {
	return dialTarget(ctx, r.target, r.o)
}

// dialTarget opens one connection to target: load's one dial, for
// generated calls (Run) and for a tape's sessions (RunTape). streamOpts
// apply to a Streamable HTTP target only (a tape session's protocol
// version and streams). Over HTTP and legacy SSE no answer headers are
// kept (WithoutAnswerHeaders: the generator reads none, and their memory
// is reused). A WebSocket handshake and a legacy SSE stream's headers and
// endpoint event are waited for at most the timeout.
func dialTarget(ctx context.Context, target Target, o *options, streamOpts ...transport.Option) (transport.Conn, error) {
	opts := o.transportOptions(target)
	switch {
	case transport.IsWebSocketURL(target.URL):
		return transport.DialWebSocket(ctx, target.URL, append(opts, transport.WithDialTimeout(o.timeout))...)
	case target.URL != "":
		return transport.DialHTTP(ctx, target.URL, append(append(opts, transport.WithoutAnswerHeaders()), streamOpts...)...)
	case target.SSE != "":
		return transport.DialLegacySSE(ctx, target.SSE, append(opts, transport.WithoutAnswerHeaders(), transport.WithDialTimeout(o.timeout))...)
	default:
		return transport.DialStdio(ctx, target.Command, opts...)
	}
}

// Run runs a load test of calls against target and returns its report.
// The closed model is the default; WithRate selects the open model. When
// ctx ends the run stops starting requests, abandons those in flight, ends
// its sessions and still returns the report of what was measured (with
// Interrupted set). The error is for a configuration that cannot run.
func Run(ctx context.Context, target Target, calls []Call, opts ...Option) (*Report, error) {
	if err := target.check(); err != nil {
		return nil, fmt.Errorf("loadgen: %w", err)
	}
	if len(calls) == 0 {
		return nil, errors.New("loadgen: no calls in the workload")
	}
	o, err := newOptions(opts)
	if err != nil {
		return nil, err
	}
	if o.client == nil && target.Command == nil {
		c, err := sharedClient(o, target.SSE != "")
		if err != nil {
			return nil, err
		}
		defer c.CloseIdleConnections()
		o.client = c
	}
	fs := frameSpec{progress: o.progress, version: o.version}
	r := &runner{o: o, target: target, st: newStats(), work: ctx, picker: newPicker(calls, fs), aborted: make(chan struct{}), prof: o.profile()}
	for i := range o.setup {
		r.setupTmpls = append(r.setupTmpls, newTemplate(&o.setup[i], frameSpec{version: o.version}))
	}
	sessions := make([]*session, o.sessions)
	for i := range sessions {
		sessions[i] = newSession(r, i)
	}
	if o.rate > 0 {
		r.setupAll(sessions)
	}
	var ilogDone chan struct{}
	var ilogWG sync.WaitGroup
	if o.hlog != nil {
		r.st.ilog = newIntervalLog(o.hlog, o.hlogEvery, time.Now())
		ilogDone = make(chan struct{})
		ilogWG.Add(1)
		go func() { defer ilogWG.Done(); r.st.ilog.run(ilogDone) }()
	}
	r.start = time.Now()
	var mk *marker
	if len(o.stages) > 0 {
		r.st.startStages(r.start, o.stageOffsets())
		mk = startMarker(r.st, r.start, o.stageOffsets())
	}
	stopIntervals := r.recordIntervals()
	stopLive := r.live()
	stopWatch := context.AfterFunc(ctx, func() { r.stopSending(time.Now()) })
	defer stopWatch()
	if o.rate > 0 {
		r.open(sessions)
	} else {
		r.closed(sessions)
	}
	end := time.Now()
	r.endMeasure(end)
	r.watchers.Wait() // after the end: the watches are no load
	var marks []*mark
	if mk != nil {
		marks = mk.stop(r.st)
	}
	ivs := stopIntervals()
	stopLive()
	var wg sync.WaitGroup
	for _, s := range sessions {
		wg.Add(1)
		go func() { defer wg.Done(); s.close() }()
	}
	wg.Wait()
	rep := r.report(end, time.Now())
	rep.Stages = o.stageReports(marks, rep.Model)
	r.st.countStages(rep.Stages) // by intended time, not by the marks
	rep.Intervals, rep.IntervalWidth = ivs, intervalWidth(ivs, r.o.interval)
	if o.results != nil {
		if err := o.results.flush(); err != nil {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("results: %v", err))
		}
	}
	if ilogDone != nil {
		close(ilogDone)
		ilogWG.Wait()
		if err := r.st.ilog.err; err != nil {
			rep.Warnings = append(rep.Warnings, fmt.Sprintf("interval log: %v", err))
		}
	}
	return rep, nil
}

// sharedClient makes the HTTP client every session of a run shares. A
// session's stream (WithGetStream, WithStreamPath, a legacy SSE stream, a
// tape's recorded GET stream) holds a connection for as long as the
// session runs, so the WithMaxConns bound is for the requests: each
// session's stream comes on top of it. Without that, streams as many as
// the bound took every connection and the requests waited for one until
// they timed out.
func sharedClient(o *options, streams bool) (*http.Client, error) {
	conns := o.maxConns
	if conns > 0 && (streams || o.getStream || o.streamPath != "") {
		conns += o.sessions
	}
	copts := []transport.ClientOption{transport.WithMaxConnsPerHost(conns)}
	if o.insecure {
		copts = append(copts, transport.WithInsecureTLS())
	}
	c, err := transport.NewHTTPClient(max(transport.DefaultMaxConns, min(o.sessions*o.inflight, 4096)), copts...)
	if err != nil {
		return nil, fmt.Errorf("loadgen: %w", err)
	}
	return c, nil
}

// live starts the live progress ticker; the returned function stops it.
func (r *runner) live() func() {
	if r.o.onTick == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(r.o.tick)
		defer t.Stop()
		for {
			select {
			case <-done:
				r.o.onTick(r.liveNow())
				return
			case <-t.C:
				r.o.onTick(r.liveNow())
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

func (r *runner) liveNow() Live {
	s := r.st.snap()
	el := time.Since(r.start)
	if m := time.Duration(r.measured.Load()); m > 0 {
		el = min(el, m) // the last figures, taken after the end, are of the run
	}
	planned := r.o.requests
	if r.planned > 0 {
		planned = r.planned
	}
	l := Live{Elapsed: el, Total: r.o.duration, Requests: s.Sent, Planned: planned,
		ErrorAnswers: s.ErrorAnswers, Cancelled: s.Cancelled,
		Answered: s.Done, Errors: s.Errors, Dropped: s.Dropped, InFlight: s.InFlight, Sessions: s.Setups, P99: s.P99, Oldest: s.Oldest}
	l.OK, l.NoAnswer = splitOutcomes(s.Done, s.ErrorAnswers, s.RequestErrors, s.Dropped)
	if over := el - r.setupSoFar(el); over > 0 {
		l.Rate = float64(l.OK) / over.Seconds()
	}
	return l
}

// endMeasure notes that the measured phase ended at end: the last live
// figures, taken after it, are of the measured phase.
func (r *runner) endMeasure(end time.Time) {
	r.measured.Store(int64(max(end.Sub(r.start), 1)))
}

// setupSoFar returns the setup of a run el into its measured phase, as
// setPhases counts it: until the closed model's first request was claimed
// (no request is ok before it, so the rate is 0 until then); 0 for a run
// with no setup phase.
func (r *runner) setupSoFar(el time.Duration) time.Duration {
	first := r.firstClaim.Load()
	if first == 0 {
		return 0
	}
	return min(max(time.Unix(0, first).Sub(r.start.Round(0)), 0), el)
}

// closed runs the closed model: every session sends its next request when
// an answer came (K loops per session with WithInFlight), starting evenly
// over the ramp.
func (r *runner) closed(sessions []*session) {
	var wg sync.WaitGroup
	n := len(sessions)
	for i, s := range sessions {
		delay := time.Duration(0)
		if r.o.ramp > 0 {
			delay = time.Duration(int64(r.o.ramp) * int64(i) / int64(n))
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !r.sleep(delay) || !r.waitActive(i) {
				return
			}
			if _, err := s.ensure(r.work); err != nil {
				return
			}
			if r.o.inflight == 1 { // no extra goroutine per session
				r.loop(s, uint64(i)<<8)
				return
			}
			var lg sync.WaitGroup
			for k := 0; k < r.o.inflight; k++ {
				lg.Add(1)
				go func() {
					defer lg.Done()
					r.loop(s, uint64(i)<<8|uint64(k))
				}()
			}
			lg.Wait()
		}()
	}
	wg.Wait()
}

// loop is one closed-model request loop of a session.
func (r *runner) loop(s *session, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x6d63707461706521))
	ctx, cancel := r.loopContext()
	defer cancel()
	var buf []byte
	var fails int64 // failures in a row calling for a back-off
	for r.waitActive(s.no) {
		// one clock read: the time the request is claimed at is the
		// time it is intended for (the closed model's send time)
		now := time.Now()
		if !r.claim(now) {
			return
		}
		r.noteFirstClaim(now)
		var c *Call
		var failed bool
		buf, c, failed = r.send(ctx, s, rng, now, buf)
		think := r.o.think
		if c != nil && c.HasThink {
			think = c.Think
		}
		if think > 0 && !r.sleep(think) {
			return
		}
		// a server that cannot be reached, or a session that cannot be
		// set up again, is tried again after a back-off
		if !failed {
			fails = 0
			continue
		}
		fails++
		if !r.sleep(backoff(fails)) {
			return
		}
	}
}

// loopContext returns the context of one request loop (or open-model
// worker): it ends with the run. The requests of the loop derive their
// contexts from it rather than from the run's own, which every loop
// shares: registering and dropping a child context per request there
// would make all loops contend for its lock.
func (r *runner) loopContext() (context.Context, context.CancelFunc) {
	return context.WithCancel(r.work)
}

// send sends one request, or one batch, on s, and returns the call sent
// (nil for a batch) and whether it failed in a way that calls for a
// back-off. ctx ends with the run.
func (r *runner) send(ctx context.Context, s *session, rng *rand.Rand, intended time.Time, buf []byte) ([]byte, *Call, bool) {
	if r.o.batch > 1 {
		ts := make([]*template, r.o.batch)
		for i := range ts {
			ts[i] = r.picker.pick(rng)
		}
		buf, failed := s.doBatch(ctx, ts, intended, buf, rng)
		return buf, nil, failed
	}
	t := r.picker.pick(rng)
	buf, failed := s.do(ctx, t, intended, buf, rng)
	return buf, t.call, failed
}

// frameBuf returns the buffer to build the next frame in: buf emptied
// (transport.Conn.Send keeps nothing of a frame once it returns).
func (r *runner) frameBuf(buf []byte) []byte { return buf[:0] }

// sleep waits d unless the run ends first; it reports whether the run
// goes on.
func (r *runner) sleep(d time.Duration) bool {
	if r.o.duration > 0 && !r.start.IsZero() {
		// no sleep past the end: claim refuses then
		d = min(d, time.Until(r.start.Add(r.o.duration)))
	}
	if d <= 0 {
		return !r.stopping()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return !r.stopping()
	case <-r.work.Done():
		return false
	case <-r.aborted:
		return false
	}
}

// setupAll sets every session up before the open model's clock starts,
// DefaultSetupConcurrency at a time.
func (r *runner) setupAll(sessions []*session) {
	sem := make(chan struct{}, DefaultSetupConcurrency)
	var wg sync.WaitGroup
	for _, s := range sessions {
		if r.work.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			_, _ = s.ensure(r.work)
		}()
	}
	wg.Wait()
}

// arrival is one open-model request due at a time, for a session.
type arrival struct {
	s    *session
	when time.Time
	seq  uint64
}

// open runs the open model: arrivals at the intended times of the rate
// (growing over the ramp), each handed to an idle worker; a new worker is
// started when none is idle, up to the in-flight bound, beyond which the
// arrival is dropped and counted. Latency is measured from the intended
// time, so a slow server cannot slow the schedule down and hide its own
// stalls (coordinated omission).
func (r *runner) open(sessions []*session) {
	work := make(chan arrival)
	var wg sync.WaitGroup
	workers := 0
	worker := func(first arrival) {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(first.seq, 0x6f70656e6d6f6465))
		ctx, cancel := r.loopContext()
		defer cancel()
		var buf []byte
		a := first
		for {
			buf, _, _ = r.send(ctx, a.s, rng, a.when, buf) // arrivals keep their schedule
			var ok bool
			if a, ok = <-work; !ok {
				return
			}
		}
	}
	for k := uint64(0); ; k++ {
		due, ok := r.prof.arrival(float64(k))
		if !ok {
			break
		}
		when := r.start.Add(due)
		if d := time.Until(when); d > 0 && !r.sleepUntil(when) {
			break
		}
		if r.o.stall != nil {
			r.o.stall(k)
		}
		if late := time.Since(when); late > 0 {
			r.st.noteLate(late)
		}
		if !r.claim(when) {
			break
		}
		a := arrival{s: sessions[k%uint64(len(sessions))], when: when, seq: k}
		select {
		case work <- a:
			continue
		default:
		}
		if workers < r.o.maxInflight {
			workers++
			wg.Add(1)
			go worker(a)
			continue
		}
		r.st.drop(when)
		r.resultDropped(when)
	}
	close(work)
	r.waitSchedule()
	wg.Wait()
}

// waitSchedule waits, once the open model's last arrival went, until the
// end of its schedule (its duration or stages), unless --requests ended it
// or the run was stopped: the run lasts the time it was asked to, and its
// rates are over that time (2/s for 1.5 s is 3 arrivals over 1.5 s, not
// over the 1 s to the last one; a ramp down to 0 ends well before its
// stage).
func (r *runner) waitSchedule() {
	if r.o.duration <= 0 || (r.o.requests > 0 && r.claims.Load() > r.o.requests) {
		return
	}
	r.sleep(time.Until(r.start.Add(r.o.duration)))
}

// sleepUntil waits until t unless the run ends first, and reports whether
// the run goes on. The duration bound is checked by claim.
func (r *runner) sleepUntil(t time.Time) bool {
	if r.o.duration > 0 && t.Sub(r.start) >= r.o.duration {
		return false
	}
	return r.sleep(time.Until(t))
}
