package loadgen

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// ReportFormat is the version of the JSON report format.
const ReportFormat = 1

// Report is the result of a run, or of several merged: every figure, and
// each series' histogram in HdrHistogram's compressed form so that reports
// of several generators merge exactly.
type Report struct {
	// Format is ReportFormat.
	Format int `json:"format"`
	// Target and Model ("closed" or "open") describe the run; Protocol is
	// the version asked for.
	Target   string `json:"target"`
	Model    string `json:"model"`
	Protocol string `json:"protocol"`
	// Sessions is the number of virtual sessions (summed over merged
	// reports), Rate the open model's arrival rate (summed too).
	Sessions int     `json:"sessions"`
	Rate     float64 `json:"rate,omitempty"`
	// Generators is the number of runs this report holds (1 unless merged).
	Generators int `json:"generators"`
	// Started and Ended bound the measured phase (for merged reports, the
	// earliest start and latest end); Duration is Ended - Started.
	Started  time.Time     `json:"started"`
	Ended    time.Time     `json:"ended"`
	Duration time.Duration `json:"duration_ns"`
	// Setup is the part of Duration before the first request was sent,
	// in the closed model: the first session's setup (dial, a stdio
	// server's start, initialize, a scenario's setup steps); 0 in the
	// open model, whose sessions are set up before Started, and in a
	// tape-driven run, whose handshakes are requests of the tape.
	// Sending is the part of Duration after it during which requests
	// were sent: up to the duration bound (WithDuration), the last
	// request (WithRequests, a tape's end) or the interruption; Wait the
	// rest, the wait for the answers then in flight (each bounded by the
	// timeout). Setup + Sending + Wait = Duration. The requests sent per
	// second are over Sending, the answers per second over Sending + Wait
	// (AnswerTime).
	// Closing is the time after Ended spent closing the sessions (HTTP
	// DELETE, a stdio server's exit, up to the grace), not measured. All
	// four were added to format 1 later: 0 in a report written before
	// (SendingTime is then Duration; a report written before Setup
	// counts the setup in Sending).
	Setup   time.Duration `json:"setup_ns,omitempty"`
	Sending time.Duration `json:"sending_ns"`
	Wait    time.Duration `json:"wait_ns"`
	Closing time.Duration `json:"closing_ns,omitempty"`
	// Requests were sent (session setups excluded). Each request sent
	// ends in one of: OK (answered with a success), ErrorAnswers
	// (answered with an error: a JSON-RPC error, a tool result with
	// isError, an answer breaking the protocol), NoAnswer (failed without
	// an answer: a timeout, a transport error, an HTTP error status, an
	// expired session, in flight at Ctrl-C, a batch member never
	// answered), or, with WithCancel, cancelled on purpose (Cancel.Sent).
	// Answered is OK + ErrorAnswers (any answer). Dropped are open-model
	// arrivals never sent because of the in-flight bound: not in
	// Requests. Setups counts the sessions set up (re-initializations
	// included). OK, ErrorAnswers and NoAnswer were added to format 1
	// later: ReadReport derives them for a report written before.
	Requests     int64 `json:"requests"`
	Answered     int64 `json:"answered"`
	OK           int64 `json:"ok"`
	ErrorAnswers int64 `json:"error_answers"`
	NoAnswer     int64 `json:"no_answer"`
	Dropped      int64 `json:"dropped"`
	Setups       int64 `json:"setups"`
	// ErrorTotal sums Errors, by kind (Class: ClassTransport,
	// ClassStatus...) and message (Detail), setups' and unasked server
	// frames' included. RequestErrors counts the requests not OK:
	// ErrorAnswers + NoAnswer + Dropped. ErrorRatio divides it by the
	// requests sent plus the arrivals dropped.
	ErrorTotal    int64        `json:"error_total"`
	RequestErrors int64        `json:"request_errors"`
	Errors        []ErrorCount `json:"errors"`
	// Interrupted reports that the run was stopped before its end (its
	// context ended: Ctrl-C); the requests then in flight are counted as
	// ClassCancelled errors.
	Interrupted bool `json:"interrupted,omitempty"`
	// Failure says why the run failed, "" when it did not: no session
	// could be set up, a stdio server exited during the run under
	// OnExitStop, the server was unreachable at the end (for
	// DownAtEndFailure at least), or (Judge) not one request succeeded.
	Failure string `json:"failure,omitempty"`
	// ServerExits counts the stdio servers that exited during the run, by
	// exit status (Class: "status 1", "signal SIGKILL").
	ServerExits []ErrorCount `json:"server_exits,omitempty"`
	// GeneratorLate is, in the open model, the most an arrival was sent
	// after its intended time: the generator's own lateness (its process
	// descheduled, a loaded machine), which the latencies include since
	// they are measured from the intended time. Merged reports keep the
	// most.
	GeneratorLate time.Duration `json:"generator_late_ns,omitempty"`
	// Outage says for how long the server could not be reached, when it
	// could not.
	Outage *OutageReport `json:"outage,omitempty"`
	// Series holds the latency series, sorted by name.
	Series []Series `json:"series"`
	// Progress is set when calls carried a progressToken.
	Progress *ProgressReport `json:"progress,omitempty"`
	// Batch is set when requests were sent in batches.
	Batch *BatchReport `json:"batch,omitempty"`
	// Cancel is set when calls were cancelled.
	Cancel *CancelReport `json:"cancel,omitempty"`
	// GetStream is set when sessions opened their Streamable HTTP GET
	// stream: how many did, and the server messages it carried.
	GetStream *GetStreamReport `json:"get_stream,omitempty"`
	// Stages gives each stage of WithStages its own figures, in order.
	Stages []StageReport `json:"stages,omitempty"`
	// Intervals holds the run's figures interval by interval
	// (WithIntervals), for charts over time.
	Intervals []Interval `json:"intervals,omitempty"`
	// IntervalWidth is the width the intervals were cut at
	// (WithIntervals): what Merge compares, since the intervals' own
	// offsets and durations stretch when the generator is descheduled
	// (added later: absent from older reports).
	IntervalWidth time.Duration `json:"interval_ns,omitempty"`
	// Capacity is the result of a capacity search (FindMax), whose steps
	// are the Stages.
	Capacity *CapacityReport `json:"capacity,omitempty"`
	// Warnings says what went wrong besides the load (an interval log
	// that could not be written).
	Warnings []string `json:"warnings,omitempty"`
}

// ErrorCount is the number of errors of one class and detail (an HTTP
// status, a JSON-RPC error code, a tool name...).
type ErrorCount struct {
	Class  string `json:"class"`
	Detail string `json:"detail,omitempty"`
	Count  int64  `json:"count"`
}

// Series is one latency series: a method, a tool, session setup, or a
// progress series. Durations are in nanoseconds. Count is the answers
// measured, ok and error answers alike (the latencies are of them; the
// text and HTML reports head it "answers"), so that the request series of
// one level add up to Report.Answered, not Report.OK; Requests the
// requests sent in the series (setups attempted
// for session setup; 0 for series that are not requests, such as
// progress intervals) and Errors those that failed, by any error kind.
type Series struct {
	Name     string `json:"name"`
	Count    int64  `json:"count"`
	Requests int64  `json:"requests,omitempty"`
	Errors   int64  `json:"errors,omitempty"`
	// Rate is the answers per second over the report's duration after
	// its setup (Report.AnswerTime); 0 for
	// setups (IsSetupSeries): a session is set up once, or again when it
	// expired, so that setups over a run's duration are no rate of
	// anything (1 setup in an 8 s run is not 0.1 setups/s).
	Rate float64 `json:"rate"`
	// Tokens sums the usage total_tokens of streamed answers (see
	// FirstChunkSuffix), TokensPerSec over the same time as Rate.
	Tokens       int64         `json:"tokens,omitempty"`
	TokensPerSec float64       `json:"tokens_per_s,omitempty"`
	Mean         time.Duration `json:"mean_ns"`
	Min          time.Duration `json:"min_ns"`
	P50          time.Duration `json:"p50_ns"`
	P90          time.Duration `json:"p90_ns"`
	P99          time.Duration `json:"p99_ns"`
	P999         time.Duration `json:"p99_9_ns"`
	Max          time.Duration `json:"max_ns"`
	// Histogram is the HdrHistogram V2 compressed encoding (base64).
	Histogram string `json:"histogram"`

	hist *hdrhistogram.Histogram
}

// Hist returns the series' histogram (decoded from Histogram when the
// report was read from JSON). The caller must not change it.
func (s *Series) Hist() (*hdrhistogram.Histogram, error) {
	if s.hist != nil {
		return s.hist, nil
	}
	h, err := hdrhistogram.Decode([]byte(s.Histogram))
	if err != nil {
		return nil, fmt.Errorf("series %q: histogram: %w", s.Name, err)
	}
	if h.TotalCount() != s.Count {
		return nil, fmt.Errorf("series %q: histogram holds %d values, count says %d", s.Name, h.TotalCount(), s.Count)
	}
	s.hist = h
	return h, nil
}

// ProgressReport sums the progress notifications of calls sent with a
// progressToken. Time to first progress and the intervals are series.
type ProgressReport struct {
	CallsWithProgress int64 `json:"calls_with_progress"`
	Notifications     int64 `json:"notifications"`
	AfterResponse     int64 `json:"after_response"`
	NotIncreasing     int64 `json:"not_increasing"`
	UnknownToken      int64 `json:"unknown_token"`
}

// report builds the report of a finished run.
func (r *runner) report(end, closed time.Time) *Report {
	st := r.st
	st.mu.Lock()
	defer st.mu.Unlock()
	rep := &Report{Format: ReportFormat, Target: r.target.String(), Model: "closed", Protocol: r.o.version,
		Sessions: r.o.sessions, Generators: 1, Started: r.start, Ended: end, Duration: end.Sub(r.start),
		Requests: st.sent, Answered: st.done, Dropped: st.dropped, Setups: st.setups,
		ErrorAnswers: st.errAnswers, Errors: st.errorList(), RequestErrors: st.reqErrs, Interrupted: r.work.Err() != nil,
		Failure: r.failureLocked(end), ServerExits: st.exitList(), Outage: st.outage.report(end),
		GeneratorLate: time.Duration(st.lateRun.Load())}
	rep.Model = r.o.model()
	rep.setPhases(r, end, closed)
	if r.o.rate > 0 {
		rep.Rate = r.o.rate
	}
	for _, e := range rep.Errors {
		rep.ErrorTotal += e.Count
	}
	rep.countOutcomes()
	rep.Series = seriesOf(st.series, st.counts)
	if r.o.progress {
		p := st.prog
		rep.Progress = &ProgressReport{CallsWithProgress: p.calls, Notifications: p.notifications,
			AfterResponse: p.afterResponse, NotIncreasing: p.notIncreasing, UnknownToken: p.unknownToken}
	}
	rep.Batch = r.batchReport()
	if r.o.getStream && r.target.URL != "" {
		rep.GetStream = st.getStreamReport()
	}
	if r.o.cancelRatio > 0 {
		c := st.cancel
		rep.Cancel = &CancelReport{Chosen: c.chosen, Sent: c.sent, AnsweredAnyway: c.answered, Quiet: c.quiet}
	}
	rep.fill()
	return rep
}

// fillPercentiles are the percentiles fill reads, in Series' order, then
// 100: the maximum.
var fillPercentiles = [...]float64{50, 90, 99, 99.9, 100}

// fill computes every series' figures and encoding from its histogram and
// sorts the series.
func (rep *Report) fill() {
	sort.Slice(rep.Series, func(i, j int) bool { return rep.Series[i].Name < rep.Series[j].Name })
	for i := range rep.Series {
		s := &rep.Series[i]
		h := s.hist
		s.Count = h.TotalCount()
		if secs := rep.AnswerTime().Seconds(); secs > 0 && !IsSetupSeries(s.Name) {
			s.Rate = float64(s.Count) / secs
			s.TokensPerSec = float64(s.Tokens) / secs
		}
		s.Mean = time.Duration(h.Mean())
		s.Min = time.Duration(h.Min())
		// one pass for the percentiles and the maximum (each
		// ValueAtPercentile, and Max, walks the counts; a report fills a
		// series every interval)
		p := h.ValueAtPercentilesSlice(fillPercentiles[:])
		s.P50, s.P90, s.P99, s.P999 = time.Duration(p[0]), time.Duration(p[1]), time.Duration(p[2]), time.Duration(p[3])
		s.Max = time.Duration(p[4])
		s.Histogram = encodeHist(h)
	}
}

// Find returns the series named name, or nil.
func (rep *Report) Find(name string) *Series {
	for i := range rep.Series {
		if rep.Series[i].Name == name {
			return &rep.Series[i]
		}
	}
	return nil
}

// WriteJSON writes the report as indented JSON.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rep); err != nil {
		return fmt.Errorf("loadgen: write report: %w", err)
	}
	return nil
}

// ReadReport reads a JSON report and checks its histograms.
func ReadReport(r io.Reader) (*Report, error) {
	var rep Report
	dec := json.NewDecoder(r)
	if err := dec.Decode(&rep); err != nil {
		return nil, fmt.Errorf("loadgen: read report: %w", err)
	}
	if rep.Format != ReportFormat {
		return nil, fmt.Errorf("loadgen: read report: format %d, want %d", rep.Format, ReportFormat)
	}
	for i := range rep.Series {
		if _, err := rep.Series[i].Hist(); err != nil {
			return nil, fmt.Errorf("loadgen: read report: %w", err)
		}
	}
	if err := checkIntervals(&rep); err != nil {
		return nil, fmt.Errorf("loadgen: read report: %w", err)
	}
	rep.deriveOutcomes()
	for _, st := range rep.Stages {
		if st.Figures != nil {
			st.Figures.deriveOutcomes()
		}
	}
	for i := range rep.Intervals {
		rep.Intervals[i].deriveOutcomes()
	}
	return &rep, nil
}

// countOutcomes sets OK and NoAnswer from Answered, ErrorAnswers,
// RequestErrors and Dropped.
func (rep *Report) countOutcomes() {
	rep.OK, rep.NoAnswer = splitOutcomes(rep.Answered, rep.ErrorAnswers, rep.RequestErrors, rep.Dropped)
}

// splitOutcomes returns the requests ok and those not answered, from the
// requests answered, those answered with an error, the requests not ok
// and the arrivals dropped (counted in the requests not ok).
func splitOutcomes(answered, errorAnswers, requestErrors, dropped int64) (ok, noAnswer int64) {
	return max(answered-errorAnswers, 0), max(requestErrors-dropped-errorAnswers, 0)
}

// deriveOutcomes sets OK, ErrorAnswers and NoAnswer of a report written
// before they were (its three are 0 though its answers or errors say
// they cannot all be: a report that has them never looks so). A request
// sent and not answered failed without an answer, unless cancelled on
// purpose; the other request errors are error answers.
func (rep *Report) deriveOutcomes() {
	if rep.OK+rep.ErrorAnswers+rep.NoAnswer != 0 || (rep.Answered == 0 && rep.RequestErrors <= rep.Dropped) {
		return
	}
	var cancelled int64
	if rep.Cancel != nil {
		cancelled = rep.Cancel.Sent
	}
	unanswered := max(rep.Requests-rep.Answered-cancelled, 0)
	rep.ErrorAnswers = min(max(rep.RequestErrors-rep.Dropped-unanswered, 0), rep.Answered)
	rep.countOutcomes()
}

// Merge combines the reports of runs made at the same time (several
// generators against one server) into one: histograms are merged exactly,
// counts and errors summed, sessions and rates summed, and the measured
// phase spans the earliest start to the latest end. Stages are merged stage
// by stage when every report has the same ones, intervals interval by
// interval when their widths agree.
func Merge(reports ...*Report) (*Report, error) {
	if len(reports) == 0 {
		return nil, errors.New("loadgen: merge: no reports")
	}
	out := &Report{Format: ReportFormat, Target: reports[0].Target, Model: reports[0].Model, Protocol: reports[0].Protocol}
	hists := map[string]*hdrhistogram.Histogram{}
	counts := map[string]*seriesCounts{}
	errs := map[errKey]int64{}
	exits := map[string]int64{}
	var prog *ProgressReport
	for i, r := range reports {
		if r.Model != out.Model {
			return nil, fmt.Errorf("loadgen: merge: report %d is of the %s model, report 1 of the %s model", i+1, r.Model, out.Model)
		}
		if out.Started.IsZero() || r.Started.Before(out.Started) {
			out.Started = r.Started
		}
		if r.Ended.After(out.Ended) {
			out.Ended = r.Ended
		}
		out.Sessions += r.Sessions
		out.Rate += r.Rate
		out.Generators += max(r.Generators, 1)
		out.Requests += r.Requests
		out.Answered += r.Answered
		out.OK += r.OK
		out.ErrorAnswers += r.ErrorAnswers
		out.NoAnswer += r.NoAnswer
		out.Dropped += r.Dropped
		out.Setups += r.Setups
		out.RequestErrors += r.RequestErrors
		out.Interrupted = out.Interrupted || r.Interrupted
		out.GeneratorLate = max(out.GeneratorLate, r.GeneratorLate)
		if out.Failure == "" && r.Failure != "" && r.Failure != r.AllFailed() { // the merge judges its own totals
			out.Failure = fmt.Sprintf("generator %d: %s", i+1, r.Failure)
		}
		for _, e := range r.Errors {
			errs[errKey{e.Class, e.Detail}] += e.Count
		}
		for _, e := range r.ServerExits {
			exits[e.Class] += e.Count
		}
		out.Outage = mergeOutage(out.Outage, r.Outage)
		for j := range r.Series {
			h, err := r.Series[j].Hist()
			if err != nil {
				return nil, fmt.Errorf("loadgen: merge: report %d: %w", i+1, err)
			}
			name := r.Series[j].Name
			if hists[name] == nil {
				hists[name] = newHist()
			}
			if counts[name] == nil {
				counts[name] = &seriesCounts{}
			}
			counts[name].requests += r.Series[j].Requests
			counts[name].errors += r.Series[j].Errors
			counts[name].tokens += r.Series[j].Tokens
			if dropped := hists[name].Merge(h); dropped != 0 {
				return nil, fmt.Errorf("loadgen: merge: report %d: series %q: %d values out of range", i+1, name, dropped)
			}
		}
		out.Batch = mergeBatch(out.Batch, r.Batch)
		out.GetStream = mergeGetStream(out.GetStream, r.GetStream)
		if c := r.Cancel; c != nil {
			if out.Cancel == nil {
				out.Cancel = &CancelReport{}
			}
			out.Cancel.Chosen += c.Chosen
			out.Cancel.Sent += c.Sent
			out.Cancel.AnsweredAnyway += c.AnsweredAnyway
			out.Cancel.Quiet += c.Quiet
		}
		if p := r.Progress; p != nil {
			if prog == nil {
				prog = &ProgressReport{}
			}
			prog.CallsWithProgress += p.CallsWithProgress
			prog.Notifications += p.Notifications
			prog.AfterResponse += p.AfterResponse
			prog.NotIncreasing += p.NotIncreasing
			prog.UnknownToken += p.UnknownToken
		}
	}
	out.Duration = out.Ended.Sub(out.Started)
	out.mergePhases(reports)
	out.Progress = prog
	out.Warnings = mergeWarnings(reports)
	for k, n := range errs {
		out.Errors = append(out.Errors, ErrorCount{Class: k.class, Detail: k.detail, Count: n})
		out.ErrorTotal += n
	}
	sortErrors(out.Errors)
	if out.Errors == nil {
		out.Errors = []ErrorCount{}
	}
	for status, n := range exits {
		out.ServerExits = append(out.ServerExits, ErrorCount{Class: status, Count: n})
	}
	sortErrors(out.ServerExits)
	out.Series = seriesOf(hists, counts)
	out.fill()
	var err error
	if out.Stages, err = mergeStages(reports); err != nil {
		return nil, fmt.Errorf("loadgen: merge: %w", err)
	}
	if out.Intervals, out.IntervalWidth, err = mergeIntervals(reports); err != nil {
		return nil, fmt.Errorf("loadgen: merge: %w", err)
	}
	return out, nil
}

// mergeWarnings returns the warnings of a merge: each generator's own,
// named by its report's place, and one when the runs did not all run at
// one time (a run started after another had ended), since the merged
// duration then spans the gap and the merged rates are lower than any
// load the server saw.
func mergeWarnings(reports []*Report) []string {
	var out []string
	for i, r := range reports {
		for _, w := range r.Warnings {
			out = append(out, fmt.Sprintf("report %d: %s", i+1, w))
		}
	}
	first, last := 0, 0 // the report that ended first, the one that started last
	for i, r := range reports {
		if r.Ended.Before(reports[first].Ended) {
			first = i
		}
		if r.Started.After(reports[last].Started) {
			last = i
		}
	}
	if gap := reports[last].Started.Sub(reports[first].Ended); gap >= 0 && len(reports) > 1 {
		out = append(out, fmt.Sprintf("the runs did not all run at one time: report %d started %s after report %d ended, so the merged duration spans the gap and its rates are lower than the load was",
			last+1, FormatLatency(gap), first+1))
	}
	return out
}

// seriesOf returns the series of a report, unsorted: every histogram, and
// every series with requests or errors but no answer measured (all its
// requests failed) with an empty one.
func seriesOf(hists map[string]*hdrhistogram.Histogram, counts map[string]*seriesCounts) []Series {
	out := make([]Series, 0, len(hists))
	for name, h := range hists {
		s := Series{Name: name, hist: h}
		if c := counts[name]; c != nil {
			s.Requests, s.Errors, s.Tokens = c.requests, c.errors, c.tokens
		}
		out = append(out, s)
	}
	for name, c := range counts {
		if hists[name] == nil && (c.requests > 0 || c.errors > 0) {
			out = append(out, Series{Name: name, Requests: c.requests, Errors: c.errors, hist: newHist()})
		}
	}
	return out
}

// ErrorRatio returns the share of the requests not OK: RequestErrors
// (error answers, no answer, dropped) over the requests sent and the open
// model's arrivals dropped. When no request was sent it is 1 if anything
// failed (no session could be set up), else 0.
func (rep *Report) ErrorRatio() float64 {
	n := rep.Requests + rep.Dropped
	if n == 0 {
		if rep.ErrorTotal > 0 {
			return 1
		}
		return 0
	}
	return min(float64(rep.RequestErrors)/float64(n), 1)
}

// ErrorRatio returns the share of the series' requests that failed, 0
// when it has none.
func (s *Series) ErrorRatio() float64 {
	if s.Requests == 0 {
		return 0
	}
	return min(float64(s.Errors)/float64(s.Requests), 1)
}
