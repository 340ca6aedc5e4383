package loadgen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Defaults of FindMax.
const (
	// DefaultFindStart is the first rate a capacity search tries.
	DefaultFindStart = 10.0
	// DefaultFindMaxRate caps a capacity search without a cap of its own.
	DefaultFindMaxRate = 1e6
	// DefaultStepDuration is how long each step is measured.
	DefaultStepDuration = 10 * time.Second
	// DefaultWarmup is how long each step runs before it is measured.
	DefaultWarmup = 2 * time.Second
	// DefaultFindPrecision is the bracket at which the bisection stops:
	// the lowest rate that broke within 10 % of the highest that held.
	DefaultFindPrecision = 0.1
	// DefaultFindFactor is the geometric step of the search upwards.
	DefaultFindFactor = 2.0
	// MinStepSamples is the requests a step must measure for its verdict
	// to be trusted (a p99 of fewer than 100 requests is their maximum).
	MinStepSamples = 100
	// maxFindSteps bounds a search.
	maxFindSteps = 40
)

// FindMaxConfig is what a capacity search (FindMax) looks for and how.
// Zero fields take the defaults above.
type FindMaxConfig struct {
	// Thresholds must all hold at a rate for it to be held (at least one).
	Thresholds []Threshold
	// Start is the first rate, MaxRate the highest tried (arrivals/s).
	Start, MaxRate float64
	// Step is the measured time of each step, Warmup the time before it
	// whose samples are discarded (negative: none). The warm-up runs at
	// the step's rate from its first instant (a hold, not a ramp), its
	// sessions set up before it: the server is at the step's load, its
	// queues settled, when the measured time begins.
	Step, Warmup time.Duration
	// Precision ends the bisection once (broke-held)/held is at most it.
	Precision float64
	// OnStep is called after each step, for progress displays.
	OnStep func(CapacityStep)
}

// CapacityReport is the result of a capacity search (Report.Capacity).
type CapacityReport struct {
	// Found reports that some rate held every threshold; Rate is the
	// highest that did. Upper is the lowest rate that broke one (0 when
	// none did: the search reached MaxRate, the capacity is above it).
	Found bool    `json:"found"`
	Rate  float64 `json:"rate"`
	Upper float64 `json:"upper,omitempty"`
	// Confidence is "high" when the bracket [Rate, Upper) is within the
	// precision and every step measured at least MinStepSamples
	// requests; "low" otherwise, with the reason in Why.
	Confidence string `json:"confidence"`
	Why        string `json:"why,omitempty"`
	// Bracket is (Upper-Rate)/Rate, the search's uncertainty.
	Bracket    float64         `json:"bracket,omitempty"`
	Thresholds []string        `json:"thresholds"`
	Steps      []CapacityStep  `json:"steps"`
	Config     CapacitySetting `json:"config"`
}

// CapacitySetting is how the search ran.
type CapacitySetting struct {
	Start     float64       `json:"start"`
	MaxRate   float64       `json:"max_rate"`
	Step      time.Duration `json:"step_ns"`
	Warmup    time.Duration `json:"warmup_ns"`
	Precision float64       `json:"precision"`
}

// CapacityStep is one step of a capacity search: the rate, its headline
// figures (Series is the series of the first latency threshold, or the
// busiest request series) and the verdict. Report.Stages holds its full
// figures, in the same order.
type CapacityStep struct {
	Rate     float64       `json:"rate"`
	Series   string        `json:"series"`
	Requests int64         `json:"requests"`
	P50      time.Duration `json:"p50_ns"`
	P99      time.Duration `json:"p99_ns"`
	Errors   float64       `json:"error_ratio"`
	Held     bool          `json:"held"`
	// Broken lists why the step broke: each threshold it broke with what
	// was measured ("errors<1% (measured 2.50%)"), or that the run failed.
	Broken []string `json:"broken,omitempty"`
	// GeneratorLate is the generator's own lateness in the measured
	// stage (Report.GeneratorLate).
	GeneratorLate time.Duration `json:"generator_late_ns,omitempty"`
	// Repeated, when the step was run twice, says what its first run
	// broke and how late the generator was then (see StallLate); the
	// figures and verdict are the second run's.
	Repeated string `json:"repeated,omitempty"`
}

// StallLate is the generator lateness (Report.GeneratorLate) at which a
// capacity-search step that broke a threshold is run again: a generator
// that sent arrivals that late was stalled itself (its process
// descheduled on a loaded machine), and the latencies, measured from the
// intended times, carry its stall. The open model never waits for the
// server, so a slow server does not make the generator late.
const StallLate = 50 * time.Millisecond

// FindMax searches the highest open-model rate at which every threshold
// holds: it steps the rate up geometrically from cfg.Start until a
// threshold breaks (or cfg.MaxRate held), then bisects between the
// highest rate that held and the lowest that broke. Each step is a run of
// its own (opts apply to each; they must not set a rate, a duration or
// stages) at a constant rate, for cfg.Warmup then cfg.Step (the rate held
// through both), measured over cfg.Step only. A step that broke a threshold while the generator itself
// was StallLate or more late is run once more, and the second run's
// verdict and figures stand (CapacityStep.Repeated says why; the first
// run's figures are left out of the report). The report merges the steps;
// Report.Stages holds each step's measured figures and Report.Capacity
// the result. When ctx ends the search stops and returns what it has
// (Interrupted set).
func FindMax(ctx context.Context, target Target, calls []Call, cfg FindMaxConfig, opts ...Option) (*Report, error) {
	cfg = cfg.withDefaults()
	if len(cfg.Thresholds) == 0 {
		return nil, errors.New("loadgen: find max: give at least one threshold")
	}
	if cfg.Start > cfg.MaxRate {
		return nil, fmt.Errorf("loadgen: find max: start rate %g/s is above the max rate %g/s", cfg.Start, cfg.MaxRate)
	}
	o, err := parseOptions(opts)
	if err != nil {
		return nil, err
	}
	if o.rate > 0 || o.duration > 0 || len(o.stages) > 0 || o.requests > 0 {
		return nil, errors.New("loadgen: find max sets the rates and durations of its steps: no rate, duration, request bound or stages besides")
	}
	return findMax(ctx, cfg, func(ctx context.Context, rate float64) (*Report, error) {
		return runStep(ctx, target, calls, cfg, rate, opts)
	})
}

// stepRunner runs one step of a capacity search at rate (runStep).
type stepRunner func(ctx context.Context, rate float64) (*Report, error)

// findMax is the search of FindMax, its steps run by run; cfg has its
// defaults.
func findMax(ctx context.Context, cfg FindMaxConfig, run stepRunner) (*Report, error) {
	cr := &CapacityReport{Config: CapacitySetting{Start: cfg.Start, MaxRate: cfg.MaxRate, Step: cfg.Step, Warmup: cfg.Warmup, Precision: cfg.Precision}}
	for _, t := range cfg.Thresholds {
		cr.Thresholds = append(cr.Thresholds, t.Spec)
	}
	var runs []*Report
	var stages []StageReport
	var lo, hi float64
	step := func(rate float64) (held, more bool, err error) {
		rep, st, err := judgeStep(ctx, run, rate, cfg.Thresholds)
		if err != nil {
			return false, false, err
		}
		if !st.Held && !rep.Interrupted && st.GeneratorLate >= StallLate {
			first := st
			if rep, st, err = judgeStep(ctx, run, rate, cfg.Thresholds); err != nil {
				return false, false, err
			}
			st.Repeated = fmt.Sprintf("the first run broke %s while the generator ran %v late",
				strings.Join(first.Broken, "; "), first.GeneratorLate.Round(time.Millisecond))
		}
		runs = append(runs, rep)
		if !rep.Interrupted {
			cr.Steps = append(cr.Steps, st)
			stages = append(stages, StageReport{Stage: len(stages) + 1, From: rate, Target: rate, Rate: true, Figures: rep.Figures()})
			if cfg.OnStep != nil {
				cfg.OnStep(st)
			}
		}
		return st.Held, !rep.Interrupted && len(cr.Steps) < maxFindSteps, nil
	}
	for rate := cfg.Start; ; rate = math.Min(rate*DefaultFindFactor, cfg.MaxRate) {
		held, more, err := step(rate)
		if err != nil {
			return nil, err
		}
		if !more {
			break
		}
		if !held {
			hi = rate
			break
		}
		lo = rate
		if rate >= cfg.MaxRate {
			break
		}
	}
	for lo > 0 && hi > 0 && (hi-lo)/lo > cfg.Precision {
		mid := (lo + hi) / 2
		held, more, err := step(mid)
		if err != nil {
			return nil, err
		}
		if !more {
			break
		}
		if held {
			lo = mid
		} else {
			hi = mid
		}
	}
	return capacityReport(runs, stages, cr, lo, hi, cfg)
}

// judgeStep runs one step at rate and judges its measured figures
// against the thresholds.
func judgeStep(ctx context.Context, run stepRunner, rate float64, th []Threshold) (*Report, CapacityStep, error) {
	rep, err := run(ctx, rate)
	if err != nil {
		return nil, CapacityStep{}, err
	}
	f := rep.Figures()
	st := CapacityStep{Rate: rate, Requests: f.Requests, Errors: f.ErrorRatio(), GeneratorLate: f.GeneratorLate}
	st.Series = headlineSeries(f, th)
	if s := f.Find(st.Series); s != nil {
		st.P50, st.P99 = s.P50, s.P99
	}
	if rep.Failure != "" {
		st.Broken = append(st.Broken, "the run failed: "+rep.Failure)
	}
	for _, t := range th {
		if o := t.Eval(f); !o.Held {
			st.Broken = append(st.Broken, t.Spec+" ("+o.Why+")")
		}
	}
	st.Held = len(st.Broken) == 0
	return rep, st, nil
}

// Verdict is the step's verdict in words: "held", or "broke " and the
// thresholds it broke with what was measured ("broke errors<1% (measured
// 2.50%)"), and, for a step run twice, why.
func (s CapacityStep) Verdict() string {
	v := "held"
	if !s.Held {
		v = "broke " + strings.Join(s.Broken, "; ")
	}
	if s.Repeated != "" {
		v += " (run again: " + s.Repeated + ")"
	}
	return v
}

// CapacityFigures returns the measured figures of the step at the
// highest rate that held every threshold (Capacity.Rate), its series with
// their histograms, or nil when the report is no capacity search or no
// rate held.
func (rep *Report) CapacityFigures() *Report {
	c := rep.Capacity
	if c == nil || !c.Found || len(c.Steps) != len(rep.Stages) {
		return nil
	}
	for i := len(c.Steps) - 1; i >= 0; i-- {
		if s := c.Steps[i]; s.Held && s.Rate == c.Rate {
			return rep.Stages[i].Figures
		}
	}
	return nil
}

// withDefaults fills the zero fields of cfg.
func (cfg FindMaxConfig) withDefaults() FindMaxConfig {
	if cfg.Start <= 0 {
		cfg.Start = DefaultFindStart
	}
	if cfg.MaxRate <= 0 {
		cfg.MaxRate = DefaultFindMaxRate
	}
	if cfg.Step <= 0 {
		cfg.Step = DefaultStepDuration
	}
	if cfg.Warmup == 0 {
		cfg.Warmup = DefaultWarmup
	}
	cfg.Warmup = max(cfg.Warmup, 0)
	if cfg.Precision <= 0 {
		cfg.Precision = DefaultFindPrecision
	}
	return cfg
}

// runStep runs one step at rate: the warm-up then the measured stage, at
// a constant rate.
func runStep(ctx context.Context, target Target, calls []Call, cfg FindMaxConfig, rate float64, opts []Option) (*Report, error) {
	stages := []Stage{{Duration: cfg.Step, Target: rate, Rate: true}}
	if cfg.Warmup > 0 {
		stages = append([]Stage{{Duration: cfg.Warmup, Target: rate, Rate: true}}, stages...)
	}
	all := append(append([]Option(nil), opts...), WithStages(stages), withStageStart(rate))
	return Run(ctx, target, calls, all...)
}

// Figures returns the measured figures of a run made of a warm-up and a
// measured stage (a capacity-search step): those of its last stage, or
// the whole run when it has no stages.
func (rep *Report) Figures() *Report {
	if n := len(rep.Stages); n > 0 {
		f := rep.Stages[n-1].Figures
		f.Target, f.Protocol, f.Sessions, f.Rate = rep.Target, rep.Protocol, rep.Sessions, rep.Stages[n-1].Target
		return f
	}
	return rep
}

// headlineSeries names the series a step's p50 and p99 are read from:
// that of the first latency threshold, else the request series with the
// most answers.
func headlineSeries(f *Report, th []Threshold) string {
	for _, t := range th {
		if t.Series != "" && f.Find(t.Series) != nil {
			return t.Series
		}
	}
	best := ""
	var n int64 = -1
	for _, s := range f.Series {
		if !IsSetupSeries(s.Name) && s.Count > n {
			best, n = s.Name, s.Count
		}
	}
	return best
}

// capacityReport builds the search's report: the steps' runs merged, the
// steps as stages, and the verdict.
func capacityReport(runs []*Report, stages []StageReport, cr *CapacityReport, lo, hi float64, cfg FindMaxConfig) (*Report, error) {
	if len(runs) == 0 {
		return nil, errors.New("loadgen: find max: no step ran")
	}
	rep, err := Merge(runs...)
	if err != nil {
		return nil, fmt.Errorf("loadgen: find max: %w", err)
	}
	rep.Sessions, rep.Generators, rep.Rate = runs[0].Sessions, 1, lo
	for i := range stages {
		stages[i].Offset = stages[i].Figures.Started.Sub(rep.Started)
	}
	// Merge's intervals, the steps' nth ones summed, are no time of the search
	rep.Intervals = nil
	for _, r := range runs { // the steps' intervals, one after the other
		shift := r.Started.Sub(rep.Started)
		for _, in := range r.Intervals {
			in.Offset += shift
			rep.Intervals = append(rep.Intervals, in)
		}
	}
	rep.Stages = stages
	cr.Found, cr.Rate, cr.Upper = lo > 0, lo, hi
	if lo > 0 && hi > 0 {
		cr.Bracket = (hi - lo) / lo
	}
	var why []string
	switch {
	case !cr.Found:
		why = append(why, fmt.Sprintf("even the first step (%g/s) broke a threshold", cfg.Start))
	case hi == 0:
		why = append(why, fmt.Sprintf("no step broke a threshold up to the max rate %g/s: the capacity is above it", cfg.MaxRate))
	case cr.Bracket > cfg.Precision:
		why = append(why, fmt.Sprintf("the search stopped with the capacity between %.4g/s and %.4g/s", lo, hi))
	}
	for _, s := range cr.Steps {
		if s.Requests < MinStepSamples {
			why = append(why, fmt.Sprintf("the step at %.4g/s measured %d requests (fewer than %d: lengthen --step-duration)", s.Rate, s.Requests, MinStepSamples))
			break
		}
	}
	cr.Confidence = "high"
	if len(why) > 0 {
		cr.Confidence, cr.Why = "low", strings.Join(why, "; ")
	}
	rep.Capacity = cr
	return rep, nil
}
