package replay

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcptape/mcptape/tape"
	"github.com/mcptape/mcptape/transport"
)

// DefaultTimeout is how long a request may wait for its live answer, and a
// step for the live equivalents of its dependencies, by default.
const DefaultTimeout = 30 * time.Second

// DefaultIgnoreNotifications are the notification methods whose counts are
// reported but never count as a difference: log messages depend on timing
// and log level, and list changes are spontaneous and depend on the
// transport (over HTTP a change announced before initialize has no stream
// to go on).
var DefaultIgnoreNotifications = []string{
	"notifications/message",
	"notifications/tools/list_changed",
	"notifications/prompts/list_changed",
	"notifications/resources/list_changed",
}

// DialFunc opens a fresh connection to the live server for one session.
type DialFunc func(ctx context.Context, s *Session) (transport.Conn, error)

// Option configures Run. A bad value is an error from Run.
type Option func(*options) error

type options struct {
	speed       float64 // 0: as fast as causality allows
	timeout     time.Duration
	concurrency int
	ignore      []string
	ignoreNotif map[string]bool
	out         *tape.Writer
	unbatch     bool          // send batch members one by one
	settle      time.Duration // margin of the wait for what the server sent last
	noTrailing  bool          // no wait for what the server sent after the last answer
	exactChunks bool          // compare the parts of streamed answers one by one
}

// DefaultSettle is the margin added to the recorded gap when waiting, after
// the last client message, for the server messages recorded after it.
const DefaultSettle = 2 * time.Second

func newRunOptions(opts []Option) (*options, error) {
	o := &options{speed: 1, timeout: DefaultTimeout, concurrency: 1, ignoreNotif: map[string]bool{}, settle: DefaultSettle}
	for _, m := range DefaultIgnoreNotifications {
		o.ignoreNotif[m] = true
	}
	for _, opt := range opts {
		if opt == nil {
			return nil, errors.New("replay: nil option")
		}
		if err := opt(o); err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
	}
	return o, nil
}

// WithSpeed scales the recorded spacing between messages: 2 replays twice
// as fast, 0.5 half as fast. It must be from MinSpeed to MaxSpeed; see
// WithMaxSpeed.
func WithSpeed(f float64) Option {
	return func(o *options) error {
		if err := checkSpeed(f); err != nil {
			return err
		}
		o.speed = f
		return nil
	}
}

// WithMaxSpeed sends every message as soon as causality allows.
func WithMaxSpeed() Option {
	return func(o *options) error { o.speed = 0; return nil }
}

// WithTimeout sets how long a request may wait for its live answer (default
// DefaultTimeout). A request not answered in time fails its session.
func WithTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("timeout %v must be positive", d)
		}
		o.timeout = d
		return nil
	}
}

// WithConcurrency sets how many sessions are replayed at once (default 1).
func WithConcurrency(n int) Option {
	return func(o *options) error {
		if n < 1 || n > 10000 {
			return fmt.Errorf("concurrency %d must be between 1 and 10000", n)
		}
		o.concurrency = n
		return nil
	}
}

// WithIgnore leaves more paths out of the comparison of responses, in the
// syntax of package internal/jsondiff ("result.serverInfo.version",
// "**.etag", "result.content[*].text"). An entry that names a notification
// method ("notifications/...") keeps that method's count out of the
// verdict instead.
func WithIgnore(paths ...string) Option {
	return func(o *options) error {
		if _, err := newComparer(paths); err != nil {
			return err
		}
		for _, p := range paths {
			if isNotificationMethod(p) {
				o.ignoreNotif[p] = true
			}
		}
		o.ignore = append(o.ignore, paths...)
		return nil
	}
}

// WithUnbatch sends the members of a recorded batch one by one, each as
// its own message, for servers that refuse batches. By default a recorded
// batch is sent as a batch.
func WithUnbatch() Option {
	return func(o *options) error { o.unbatch = true; return nil }
}

// WithExactChunks compares the parts of answers streamed as several
// results one by one: their number and each delta, not only the joined
// text and the end result (see streamed.go).
func WithExactChunks() Option {
	return func(o *options) error { o.exactChunks = true; return nil }
}

// WithSettle sets the margin of the wait, once every client message was
// sent, for the server messages recorded after the last one (a
// notification that follows the last answer): the replay waits until they
// have arrived, or for the recorded gap plus d, whichever comes first
// (default DefaultSettle); and for the live answers to the requests
// recorded without one, up to d after the last client message was sent
// (SessionReport.Unanswered). It must not be negative.
func WithSettle(d time.Duration) Option {
	return func(o *options) error {
		if d < 0 {
			return fmt.Errorf("settle %v must not be negative", d)
		}
		o.settle = d
		return nil
	}
}

// WithoutTrailingWait ends a session once every client message was sent
// and every recorded answer came (or timed out), without the wait for the
// server messages recorded after the last client message, nor for the
// answers to requests recorded without one (WithSettle):
// for a load, which measures the answers only.
func WithoutTrailingWait() Option {
	return func(o *options) error { o.noTrailing = true; return nil }
}

// WithTape records the replay on w: every frame sent and received, under
// the recorded session's name, so that the replay can be inspected and
// diffed like any tape. Run does not close w.
func WithTape(w *tape.Writer) Option {
	return func(o *options) error {
		if w == nil {
			return errors.New("tape writer is nil")
		}
		o.out = w
		return nil
	}
}

// CheckOptions reports the first bad option, as Run would, without
// replaying anything.
func CheckOptions(opts ...Option) error {
	o, err := newRunOptions(opts)
	if err != nil {
		return err
	}
	if _, err := newComparer(o.ignore); err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	return nil
}

// HTTPOptions returns the transport options a Streamable HTTP connection
// needs to replay s: the recorded protocol version (sent until a live
// initialize negotiates one; for 2026-07-28 sessions it also turns on the
// headers derived from the body) and the GET stream when the recorded
// server used it.
func HTTPOptions(s *Session) []transport.Option {
	var opts []transport.Option
	if s.Version != "" {
		opts = append(opts, transport.WithProtocolVersion(s.Version))
	}
	switch {
	case s.StreamPath != "":
		opts = append(opts, transport.WithStreamPath(s.StreamPath))
	case s.GetStream:
		opts = append(opts, transport.WithGetStream())
	}
	return opts
}
