package loadgen

import (
	"math/rand/v2"
	"time"
)

// Back-off of a session whose exchanges fail (the server unreachable or
// busy, a setup refused, a stdio server that keeps exiting; see
// backsOff): the wait before the next attempt doubles from BackoffMin
// with each failure in a row, up to BackoffMax, and is drawn at random in
// its upper half (jitter, so that sessions that failed together do not
// come back together).
const (
	BackoffMin = 50 * time.Millisecond
	BackoffMax = time.Second
)

// backoff returns the wait after n failures in a row (n >= 1).
func backoff(n int64) time.Duration {
	d := BackoffMax
	if n >= 1 && n < 16 {
		d = min(BackoffMin<<(n-1), BackoffMax)
	}
	return d/2 + rand.N(d/2+1)
}

// outage tracks the time the server could not be reached: a period starts
// with a transport failure while the server was up, and ends with the next
// answer or session set up.
type outage struct {
	since    time.Time // start of the current period; zero when up
	periods  int64
	total    time.Duration // of the periods ended
	attempts int64         // exchanges that failed on transport during the periods
}

// downLocked notes a transport failure at now; the stats' lock is held.
func (o *outage) downLocked(now time.Time) {
	if o.since.IsZero() {
		o.since = now
		o.periods++
	}
	o.attempts++
}

// upLocked notes an answer now (the clock is read only to end an
// outage); the stats' lock is held.
func (o *outage) upLocked() {
	if !o.since.IsZero() {
		o.total += time.Since(o.since)
		o.since = time.Time{}
	}
}

// OutageReport says for how long the server could not be reached during
// the run: from a transport failure (connection refused, reset, the stdio
// server exited...) to the next answer. Attempts counts the exchanges that
// failed on transport meanwhile (sessions back off between attempts).
type OutageReport struct {
	Periods  int64         `json:"periods"`
	Down     time.Duration `json:"down_ns"`
	Attempts int64         `json:"attempts"`
	// DownAtEnd reports that the server was still unreachable when the
	// run ended.
	DownAtEnd bool `json:"down_at_end,omitempty"`
}

// report returns the outage figures at end, nil when there was none.
func (o *outage) report(end time.Time) *OutageReport {
	if o.periods == 0 {
		return nil
	}
	rep := &OutageReport{Periods: o.periods, Down: o.total, Attempts: o.attempts}
	if !o.since.IsZero() {
		rep.DownAtEnd = true
		if end.After(o.since) {
			rep.Down += end.Sub(o.since)
		}
	}
	return rep
}

// mergeOutage adds b to into (nil when neither exists).
func mergeOutage(into, b *OutageReport) *OutageReport {
	if b == nil {
		return into
	}
	if into == nil {
		into = &OutageReport{}
	}
	into.Periods += b.Periods
	into.Down = max(into.Down, b.Down) // generators ran at the same time
	into.Attempts += b.Attempts
	into.DownAtEnd = into.DownAtEnd || b.DownAtEnd
	return into
}
