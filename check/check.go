// Package check is the CI gate over recorded tapes (mcptape check): it
// inspects each tape with package analysis, turns what the inspection found
// into signals (error responses, tool errors, protocol violations,
// unanswered, cancelled or slow requests, deprecated features, an
// incomplete tape, drift from a baseline surface) and checks assertions
// (tools expected or forbidden, maximum durations, latency and error
// thresholds in the syntax of mcptape load). The result is a list of test
// cases, one per signal and session, written as text, JSON or JUnit XML.
//
// Data flows: tape -> analysis.Inspect -> Report -> cases -> Result. The
// threshold syntax is parsed by loadgen.ParseThreshold (one parser for
// load and check); the values are measured here on the inspection report.
package check

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/mcptape/mcptape/analysis"
	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/loadgen"
)

// Signals: names are stable, for --fail-on.
const (
	SignalError      = "error"      // a JSON-RPC error response, or a request or notification refused with an HTTP error (not 401)
	SignalToolError  = "tool-error" // a tools/call result with isError
	SignalViolation  = "violation"  // a protocol violation
	SignalUnanswered = "unanswered" // a request never answered, or broken off by the server (its response or the session it ended; not one the client left: OutcomeClientGone)
	SignalCancelled  = "cancelled"  // a request cancelled
	SignalAbandoned  = "abandoned"  // an MRTR operation whose last answer asked for input, never retried
	SignalUnfinished = "unfinished" // a task with no terminal status or result seen
	SignalSlow       = "slow"       // a client request slower than WithSlow
	SignalDeprecated = "deprecated" // a deprecated feature: protocol 2024-11-05, JSON-RPC batches
	SignalIncomplete = "incomplete" // the tape is cut or damaged, or messages were recorded cut or not recorded
	SignalDrift      = "drift"      // a breaking change from the baseline surface
)

// Signals lists every signal, in report order.
var Signals = []string{SignalError, SignalToolError, SignalViolation, SignalUnanswered, SignalCancelled,
	SignalAbandoned, SignalUnfinished, SignalSlow, SignalDeprecated, SignalIncomplete, SignalDrift}

// DefaultFailOn are the signals that fail a check unless WithFailOn says
// otherwise: what is wrong whatever the server does. Error responses, tool
// errors and cancels are often part of a correct conversation, and so are
// an MRTR operation abandoned (the user declined to give the input) and a
// task left unfinished (the client stopped polling, or the recording
// ended first): notes, unless selected.
var DefaultFailOn = []string{SignalViolation, SignalUnanswered, SignalIncomplete, SignalDrift}

// DefaultSlow is the latency above which a request is slow.
const DefaultSlow = 10 * time.Second

// Option configures a check. A bad value is an error.
type Option func(*options) error

// CheckOptions returns the first error of opts, applied in order: a
// command line checks each flag's option with it before it reads a tape,
// so that a bad value names its flag.
func CheckOptions(opts ...Option) error {
	var o options
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return err
		}
	}
	return nil
}

type options struct {
	failOn      map[string]bool
	slow        time.Duration
	expect      []string
	forbid      []string
	maxDuration []maxDuration
	thresholds  []loadgen.Threshold
	baseline    *analysis.Surface
	inspect     []analysis.Option
	joined      map[string][]string // RunTapes: the files of a tape read joined, by name
}

// maxDuration is a --max-duration bound: spec, its name (series:DUR
// without spaces around), the series ("" for sessions) and the bound.
type maxDuration struct {
	spec, series string
	d            time.Duration
}

// WithFailOn selects the signals that fail the check; the others are
// reported as notes.
func WithFailOn(signals ...string) Option {
	return func(o *options) error {
		o.failOn = map[string]bool{}
		for _, s := range signals {
			if !slices.Contains(Signals, s) {
				return fmt.Errorf("unknown signal %q (want %s)", s, strings.Join(Signals, ", "))
			}
			o.failOn[s] = true
		}
		return nil
	}
}

// WithSlow sets the latency above which a client request is slow (default
// DefaultSlow).
func WithSlow(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("slow %v: must be positive", d)
		}
		o.slow = d
		return nil
	}
}

// WithExpectTool asserts that some session of the run called the tool.
func WithExpectTool(name string) Option {
	return func(o *options) error {
		if name == "" {
			return errors.New("expect tool: empty tool name")
		}
		o.expect = append(o.expect, name)
		return nil
	}
}

// WithForbidTool asserts that no session called the tool.
func WithForbidTool(name string) Option {
	return func(o *options) error {
		if name == "" {
			return errors.New("forbid tool: empty tool name")
		}
		o.forbid = append(o.forbid, name)
		return nil
	}
}

// WithMaxDuration asserts "[SERIES:]DUR": every session lasts at most DUR,
// or with a series (a method, or "tools/call NAME") no client request of
// it took longer. Spaces around the series and DUR are left out of the
// case's name; a series with a control character (a line break) is
// refused: the name is a line of the text result.
func WithMaxDuration(spec string) Option {
	return func(o *options) error {
		series, dur := "", strings.TrimSpace(spec)
		if i := strings.LastIndexByte(spec, ':'); i >= 0 {
			series, dur = strings.TrimSpace(spec[:i]), strings.TrimSpace(spec[i+1:])
			switch {
			case series == "":
				return fmt.Errorf("max duration %q: empty series before ':'", spec)
			case strings.IndexFunc(series, unicode.IsControl) >= 0:
				return fmt.Errorf("max duration %q: a control character in the series %q", spec, series)
			}
		}
		d, err := time.ParseDuration(dur)
		if err != nil || d <= 0 {
			return fmt.Errorf("max duration %q: %q is not a positive duration such as 2s", spec, dur)
		}
		name := dur
		if series != "" {
			name = series + ":" + dur
		}
		o.maxDuration = append(o.maxDuration, maxDuration{name, series, d})
		return nil
	}
}

// WithThreshold asserts a threshold in the syntax of mcptape load
// ("tools/call search:p99<2s", "errors<1%"), measured on each tape.
func WithThreshold(spec string) Option {
	return func(o *options) error {
		t, err := loadgen.ParseThreshold(spec)
		if err != nil {
			return err
		}
		if t.Stat == "p99.9" {
			return fmt.Errorf("threshold %q: p99.9 is not measured on tapes (mean, p50, p90, p99, max, rate, count)", spec)
		}
		o.thresholds = append(o.thresholds, t)
		return nil
	}
}

// WithBaseline compares the surface each tape's server offered with b:
// a breaking change fires the drift signal; additions are notes.
func WithBaseline(b *analysis.Surface) Option {
	return func(o *options) error { o.baseline = b; return nil }
}

// WithInspectOptions passes options to the inspection of each tape.
func WithInspectOptions(opts ...analysis.Option) Option {
	return func(o *options) error { o.inspect = append(o.inspect, opts...); return nil }
}

// Case is one test case: a signal in a session, or an assertion.
type Case struct {
	// Tape is the file; "" for an assertion on the whole run.
	Tape string `json:"tape,omitempty"`
	// Session is the session checked; "" for the tape as a whole, or
	// for the sessions Folded counts.
	Session string `json:"session,omitempty"`
	// Folded, when not 0, says that the case covers together that many
	// sessions of the tape beyond the inspection's listing bound
	// (analysis.DefaultMaxSessions), which have no cases of their own.
	Folded int `json:"folded_sessions,omitempty"`
	// Name names the signal or the assertion ("expect-tool echo").
	Name string `json:"name"`
	// Signal is the signal's name, or "assertion".
	Signal string `json:"signal"`
	// Selected tells whether the case can fail the run: a selected signal
	// or an assertion. A signal that fires unselected is a note.
	Selected bool     `json:"selected"`
	Fired    bool     `json:"fired"`
	Count    int64    `json:"count,omitempty"`
	Message  string   `json:"message,omitempty"`
	Details  []string `json:"details,omitempty"`
	// Measured is the exact value of a failed threshold or max-duration
	// assertion, which Message gives rounded: nanoseconds for a
	// duration, a fraction for a share of errors, else a count or a rate
	// per second.
	Measured *float64 `json:"measured,omitempty"`
}

// tapeError is the TapeError of err about the tape at path. The reader's
// errors start with the file's name, which Tape holds: Error does not say
// it again.
func tapeError(path string, err error) TapeError {
	return TapeError{Tape: path, Error: strings.TrimPrefix(err.Error(), path+": ")}
}

// Failed reports whether the case fails the run.
func (c *Case) Failed() bool { return c.Selected && c.Fired }

// Result is the outcome of a check over several tapes.
type Result struct {
	Tapes    []string    `json:"tapes"`
	Sessions int         `json:"sessions"`
	Cases    []Case      `json:"cases"`
	Failures int         `json:"failures"`
	Errors   []TapeError `json:"errors,omitempty"`
}

// TapeError is a tape that could not be checked.
type TapeError struct {
	Tape  string `json:"tape"`
	Error string `json:"error"`
}

// Failed reports whether a selected signal fired or an assertion failed.
func (r *Result) Failed() bool { return r.Failures > 0 }

// Run checks the tapes at paths as one run. A tape that cannot be read is
// listed in Result.Errors and the others are still checked; the error
// returned is for a bad option or a cancelled context.
func Run(ctx context.Context, paths []string, opts ...Option) (*Result, error) {
	o := options{slow: DefaultSlow}
	if err := WithFailOn(DefaultFailOn...)(&o); err != nil {
		return nil, err
	}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, fmt.Errorf("check: %w", err)
		}
	}
	res := &Result{Tapes: paths}
	called := map[string]bool{}
	for _, path := range paths {
		rep, err := o.inspectTape(ctx, path) // tapes.go
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			res.Errors = append(res.Errors, tapeError(path, err))
			continue
		}
		res.Sessions += len(rep.Sessions) + rep.SessionsFolded
		for i := range rep.Sessions {
			toolsCalled(called, &rep.Sessions[i])
		}
		if f := rep.FoldedSessions; f != nil {
			toolsCalled(called, f)
		}
		cases, err := o.tapeCases(ctx, path, rep)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			res.Errors = append(res.Errors, tapeError(path, err))
		}
		res.Cases = append(res.Cases, cases...)
	}
	for _, name := range o.expect {
		c := Case{Name: "expect-tool " + name, Signal: "assertion", Selected: true, Fired: !called[name]}
		if c.Fired {
			c.Message = fmt.Sprintf("no session of the %s called %s", english.Count(int64(len(paths)), "tape"), name)
		}
		res.Cases = append(res.Cases, c)
	}
	for _, c := range res.Cases {
		if c.Failed() {
			res.Failures++
		}
	}
	return res, nil
}

// toolsCalled marks the tools that session s called in called.
func toolsCalled(called map[string]bool, s *analysis.SessionReport) {
	for _, t := range s.ToolsCalled {
		called[t.Name] = true
	}
}
