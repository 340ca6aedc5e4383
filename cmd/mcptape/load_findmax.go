package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/loadgen"
)

// findMaxFlags are the flags of "mcptape load --find-max".
type findMaxFlags struct {
	on        bool
	step      time.Duration
	warmup    time.Duration
	maxRate   string
	precision float64
}

func (f *findMaxFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.on, "find-max", false, "search the highest rate at which every --threshold holds: steps up geometrically from --rate (default 10/s), then bisects; exit 3 if even the first step broke")
	fs.DurationVar(&f.step, "step-duration", loadgen.DefaultStepDuration, "with --find-max: measured time of each step")
	fs.DurationVar(&f.warmup, "warmup", loadgen.DefaultWarmup, "with --find-max: time each step runs at its rate before it is measured (a hold, not a ramp; its samples are discarded)")
	fs.StringVar(&f.maxRate, "max-rate", "", "with --find-max: highest rate `R/s` to try (default 1e6/s)")
	fs.Float64Var(&f.precision, "find-precision", loadgen.DefaultFindPrecision, "with --find-max: stop bisecting once the lowest rate that broke is within `F` (0.1: 10%) of the highest that held")
}

// runFindMax runs "mcptape load --find-max": one open-model run per step.
func runFindMax(ctx context.Context, st *stdio, f *loadFlags, command []string) error {
	fm := &f.findMax
	switch {
	case f.tape != "" || len(f.stages) > 0 || f.duration != 0 || f.requests != 0 || f.ramp != 0 || f.results != "" || f.hlog != "":
		return usageError("--find-max sets the rate and duration of its steps: no --tape, --stage, --duration, --requests, --ramp, --results or --hlog")
	case len(f.thresholds) == 0:
		return usageError("--find-max needs at least one --threshold, such as 'tools/call:p99<100ms'")
	case fm.step == 0: // a negative duration is refused as the flags are parsed
		return usageError("--step-duration must be positive")
	case !(fm.precision > 0 && fm.precision < 1):
		return usageError("--find-precision %v: want a fraction above 0 and below 1", fm.precision)
	}
	cfg := loadgen.FindMaxConfig{Step: fm.step, Warmup: fm.warmup, Precision: fm.precision, Start: loadgen.DefaultFindStart}
	if fm.warmup == 0 {
		cfg.Warmup = -1
	}
	if f.rate != "" {
		r, err := loadgen.ParseRate(f.rate)
		if err != nil {
			return usageError("--rate: %v", err)
		}
		cfg.Start = r
	}
	if fm.maxRate != "" {
		r, err := loadgen.ParseRate(fm.maxRate)
		if err != nil {
			return usageError("--max-rate: %v", err)
		}
		cfg.MaxRate = r
		if cfg.Start > r {
			return usageError("--max-rate %s is below the first rate %g/s", fm.maxRate, cfg.Start)
		}
	}
	if f.inflight != 1 || f.think != 0 {
		return usageError("--inflight and --think belong to the closed model, not to --find-max")
	}
	target, calls, opts, th, err := f.check(ctx, command)
	if err != nil {
		return err
	}
	cfg.Thresholds = th
	if !f.quiet {
		cfg.OnStep = func(s loadgen.CapacityStep) {
			verdict := "held"
			if !s.Held {
				verdict = "broke"
			}
			if s.Repeated != "" {
				verdict += " (run again: " + s.Repeated + ")"
			}
			fmt.Fprintf(st.err, "load: step %.4g/s: %s, p50 %v, p99 %v, errors %.2f%%: %s\n",
				s.Rate, english.Count(s.Requests, "request"), s.P50.Round(time.Microsecond), s.P99.Round(time.Microsecond), 100*s.Errors, verdict)
		}
	}
	opts = append(opts, loadgen.WithNotice(func(s string) { fmt.Fprintf(st.err, "load: %s\n", s) }))
	opts, closeErrw, err := f.openServerStderr(opts, nil) // no live bar
	if err != nil {
		return err
	}
	defer closeErrw()
	rep, err := loadgen.FindMax(ctx, target, calls, cfg, opts...)
	if err != nil {
		return withCode(2, err)
	}
	if f.hgrm != "" { // the histograms of the highest rate that held
		if fig := rep.CapacityFigures(); fig != nil {
			if err := fig.WriteHgrmDir(f.hgrm); err != nil {
				return err
			}
		} else {
			fmt.Fprintf(st.err, "load: --hgrm: no rate held: no histograms written\n")
		}
	}
	if err := emitReport(ctx, st, rep, f.jsonOut, nil); err != nil {
		return err
	}
	if !rep.Capacity.Found {
		return withCode(3, fmt.Errorf("no rate held every threshold, not even %g/s", cfg.Start))
	}
	return nil
}
