package loadgen

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Stage is one stage of a load shape (WithStages): over Duration the load
// moves linearly from the previous stage's target (0 before the first) to
// Target. Target is sessions in the closed model, arrivals per second in
// the open model (Rate true).
type Stage struct {
	Duration time.Duration
	Target   float64
	Rate     bool
}

// String gives the stage as a --stage spec.
func (s Stage) String() string {
	if s.Rate {
		return fmt.Sprintf("%s:%s/s", s.Duration, strconv.FormatFloat(s.Target, 'g', -1, 64))
	}
	return fmt.Sprintf("%s:%d", s.Duration, int(s.Target))
}

// ParseStage parses a --stage spec "DUR:TARGET": TARGET is a number of
// sessions (closed model, "50") or a rate ("100/s", "600/m": open model).
// A target of 0 is allowed (a ramp down).
func ParseStage(spec string) (Stage, error) {
	d, t, ok := strings.Cut(strings.TrimSpace(spec), ":")
	if !ok {
		return Stage{}, fmt.Errorf("stage %q: want DUR:TARGET, such as 30s:100/s or 1m:50", spec)
	}
	dur, err := time.ParseDuration(strings.TrimSpace(d))
	if err != nil || dur <= 0 {
		return Stage{}, fmt.Errorf("stage %q: %q is not a positive duration", spec, d)
	}
	t = strings.TrimSpace(t)
	if strings.Contains(t, "/") {
		r, err := parseRate(t, true)
		if err != nil {
			return Stage{}, fmt.Errorf("stage %q: %w", spec, err)
		}
		return Stage{Duration: dur, Target: r, Rate: true}, nil
	}
	n, err := strconv.Atoi(t)
	if err != nil || n < 0 || n > 1000000 {
		return Stage{}, fmt.Errorf("stage %q: %q is neither a number of sessions (0 to 1000000) nor a rate such as 100/s", spec, t)
	}
	return Stage{Duration: dur, Target: float64(n)}, nil
}

// ParseRate parses "R", "R/s", "R/m" or "R/h" into a positive number of
// arrivals per second.
func ParseRate(s string) (float64, error) { return parseRate(s, false) }

// parseRate is ParseRate; zero allows a rate of 0.
func parseRate(s string, zero bool) (float64, error) {
	num, unit, _ := strings.Cut(strings.TrimSpace(s), "/")
	div := 1.0
	switch unit {
	case "", "s":
	case "m":
		div = 60
	case "h":
		div = 3600
	default:
		return 0, fmt.Errorf("%q: unit must be /s, /m or /h", s)
	}
	r, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(r) || math.IsInf(r, 0) || r < 0 || (r == 0 && !zero) || r/div > 1e7 {
		return 0, fmt.Errorf("%q is not a positive rate such as 2000/s (at most 1e7/s)", s)
	}
	return r / div, nil
}

// WithStages shapes the load in stages, run one after the other: the run
// lasts their total duration (WithDuration and WithRamp do not apply).
// Rate stages select the open model, arrivals spread over the sessions of
// WithSessions; session stages the closed model, with as many sessions as
// the highest target, of which session i sends requests while the target
// is above i. The report gives each stage its own figures
// (Report.Stages).
func WithStages(stages []Stage) Option {
	return func(o *options) error {
		if len(stages) == 0 {
			return errors.New("stages: none given")
		}
		for i, s := range stages {
			if s.Rate != stages[0].Rate {
				return fmt.Errorf("stage %d (%s): stages are all rates (open model) or all sessions (closed model)", i+1, s)
			}
			if s.Duration <= 0 || s.Target < 0 || math.IsNaN(s.Target) || s.Target > 1e7 {
				return fmt.Errorf("stage %d (%s): needs a positive duration and a target from 0 to 1e7", i+1, s)
			}
		}
		o.stages = append([]Stage(nil), stages...)
		return nil
	}
}

// withStageStart makes the first stage start from target v instead of 0
// (a capacity-search step holds its rate through the warm-up).
func withStageStart(v float64) Option {
	return func(o *options) error { o.stageFrom = v; return nil }
}

// applyStages derives the duration, the model and the sessions from the
// stages; it is called once the options are parsed.
func (o *options) applyStages() error {
	if len(o.stages) == 0 {
		return nil
	}
	if o.duration != 0 || o.ramp != 0 {
		return errors.New("stages set the duration and the ramps: no duration or ramp besides")
	}
	if o.rate > 0 {
		return errors.New("stages set the rate: no rate besides")
	}
	top := o.stageFrom
	for _, s := range o.stages {
		o.duration += s.Duration
		top = max(top, s.Target)
	}
	if top <= 0 {
		return errors.New("stages: every target is 0, nothing would be sent")
	}
	if o.stages[0].Rate {
		o.rate = top
	} else {
		o.sessions = int(math.Ceil(top))
	}
	return nil
}

// segment is one piece of a load profile: the target goes linearly from
// from to to over dur.
type segment struct {
	dur      time.Duration
	from, to float64
}

// profile is a piecewise linear load (sessions or arrivals per second)
// over time; after its last segment the last target holds.
type profile []segment

// profile returns the load profile of the run: its stages, or for the
// open model the ramp then the rate.
func (o *options) profile() profile {
	if len(o.stages) > 0 {
		p := make(profile, len(o.stages))
		prev := o.stageFrom
		for i, s := range o.stages {
			p[i] = segment{dur: s.Duration, from: prev, to: s.Target}
			prev = s.Target
		}
		return p
	}
	if o.ramp > 0 {
		return profile{{dur: o.ramp, from: 0, to: o.rate}}
	}
	return profile{{dur: 0, from: o.rate, to: o.rate}}
}

// at returns the target at t from the start.
func (p profile) at(t time.Duration) float64 {
	for _, s := range p {
		if t < s.dur {
			return s.from + (s.to-s.from)*float64(t)/float64(s.dur)
		}
		t -= s.dur
	}
	return p[len(p)-1].to
}

// arrival returns when, from the start, the integral of the rate reaches
// x (arrival x, from 0, is due then); false when it never does (the rate
// falls to 0 first).
func (p profile) arrival(x float64) (time.Duration, bool) {
	var base float64 // seconds from the start to the current segment
	for _, s := range p {
		d := s.dur.Seconds()
		area := (s.from + s.to) / 2 * d
		if x <= 0 {
			return secs(base), true
		}
		if x < area {
			// solve from*t + (to-from)/(2d)*t² = x, in a form stable
			// for a rate that rises, falls or stays
			a, b := (s.to-s.from)/(2*d), s.from
			disc := math.Max(b*b+4*a*x, 0)
			return secs(base + 2*x/(b+math.Sqrt(disc))), true
		}
		x -= area
		base += d
	}
	last := p[len(p)-1].to
	if last <= 0 {
		return 0, false
	}
	return secs(base + x/last), true
}

// nextAbove returns the first time at or after t when the target is above
// v, false when it never is.
func (p profile) nextAbove(v float64, t time.Duration) (time.Duration, bool) {
	var base time.Duration
	for _, s := range p {
		end := base + s.dur
		if t < end {
			from := max(t, base)
			if p.at(from) > v {
				return from, true
			}
			if s.to > v { // crosses v within the segment
				frac := (v - s.from) / (s.to - s.from)
				at := base + time.Duration(frac*float64(s.dur)) + time.Millisecond
				return min(max(at, from), end), true
			}
		}
		base = end
	}
	if p[len(p)-1].to > v {
		return max(t, base), true
	}
	return 0, false
}

// secs converts s seconds to a Duration, saturated: an arrival due beyond
// Duration's range (a rate below about 1e-10/s) is due at the end of time,
// not at the wrapped-round value of an out-of-range conversion.
func secs(s float64) time.Duration {
	ns := s * float64(time.Second)
	if ns >= math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(ns)
}

// waitActive waits until closed-model session no is active under the
// stages (the target above no), reporting false when it never is again
// or the run ends first.
func (r *runner) waitActive(no int) bool {
	if len(r.o.stages) == 0 {
		return true
	}
	at, ok := r.prof.nextAbove(float64(no), time.Since(r.start))
	if !ok {
		return false
	}
	return r.sleep(time.Until(r.start.Add(at)))
}
