package mock

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/tape"
)

// DefaultAnswerTimeout is how long the mock waits for the client's answer
// to one of its own requests (sampling, elicitation, roots) by default.
const DefaultAnswerTimeout = 30 * time.Second

// Option configures a Mock. A bad value is an error from New.
type Option func(*options) error

type options struct {
	match         Match
	cycle         bool
	strict        bool
	speed         float64 // 0: no waiting
	answerTimeout time.Duration
	out           *tape.Writer
	faults        Faults
	batch         BatchShape // how a batch POSTed over HTTP is answered
}

// Faults are the failures a Mock injects, for chaos-testing clients. Every
// draw comes from one generator seeded with Seed, in the order requests
// arrive, so a run with the same client is repeatable.
type Faults struct {
	// ErrorRate is the share of requests (0..1) answered with an internal
	// error (-32603) instead of their recorded answer.
	ErrorRate float64
	// DropRate is the share of requests (0..1) never answered.
	DropRate float64
	// Delay is added before every answer, plus a uniform random share of
	// Jitter.
	Delay, Jitter time.Duration
	// DisconnectAfter ends the connection (the stdio run or the HTTP
	// server) once that many requests have been answered (0: never).
	DisconnectAfter int
	// Seed seeds the generator.
	Seed int64
}

func buildOptions(opts []Option) (*options, error) {
	o := &options{speed: 1, answerTimeout: DefaultAnswerTimeout}
	for _, opt := range opts {
		if opt == nil {
			return nil, errors.New("mock: nil option")
		}
		if err := opt(o); err != nil {
			return nil, fmt.Errorf("mock: %w", err)
		}
	}
	return o, nil
}

// WithMatch sets which part of a request picks its answer (default
// MatchExact).
func WithMatch(m Match) Option {
	return func(o *options) error {
		if m < MatchExact || m > MatchTool {
			return fmt.Errorf("unknown match mode %d", m)
		}
		o.match = m
		return nil
	}
}

// WithCycle makes a key recorded several times cycle through its answers
// instead of repeating the last one once they are used up.
func WithCycle() Option { return func(o *options) error { o.cycle = true; return nil } }

// WithStrict ends the run at the first request that matches no recorded
// one: Serve returns an error wrapping ErrMismatch.
func WithStrict() Option { return func(o *options) error { o.strict = true; return nil } }

// WithSpeed divides the recorded latency by f (2: twice as fast). It must
// be positive, as replay.WithSpeed's; see WithMaxSpeed.
func WithSpeed(f float64) Option {
	return func(o *options) error {
		// The same rule as replay's --speed.
		if err := replay.CheckOptions(replay.WithSpeed(f)); err != nil {
			return errors.New(strings.TrimPrefix(err.Error(), "replay: "))
		}
		o.speed = f
		return nil
	}
}

// WithMaxSpeed answers at once, with no recorded latency.
func WithMaxSpeed() Option { return func(o *options) error { o.speed = 0; return nil } }

// WithAnswerTimeout sets how long the mock waits for the client's answer
// to a server request before going on (default DefaultAnswerTimeout).
func WithAnswerTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("answer timeout %v must be positive", d)
		}
		o.answerTimeout = d
		return nil
	}
}

// WithTape records the mock's sessions on w: every frame received and sent.
// The caller closes w after Serve returns.
func WithTape(w *tape.Writer) Option {
	return func(o *options) error {
		if w == nil {
			return errors.New("nil tape writer")
		}
		o.out = w
		return nil
	}
}

// WithFaults injects the failures f describes.
func WithFaults(f Faults) Option {
	return func(o *options) error {
		switch {
		case !(f.ErrorRate >= 0 && f.ErrorRate <= 1): // NaN too
			return fmt.Errorf("error rate %v must be between 0 and 1", f.ErrorRate)
		case !(f.DropRate >= 0 && f.DropRate <= 1):
			return fmt.Errorf("drop rate %v must be between 0 and 1", f.DropRate)
		case f.ErrorRate+f.DropRate > 1:
			return fmt.Errorf("error rate %v and drop rate %v add up to more than 1", f.ErrorRate, f.DropRate)
		case f.Delay < 0 || f.Jitter < 0:
			return errors.New("delay and jitter must not be negative")
		case f.DisconnectAfter < 0:
			return fmt.Errorf("disconnect-after %d must not be negative", f.DisconnectAfter)
		}
		o.faults = f
		return nil
	}
}
