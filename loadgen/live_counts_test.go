package loadgen

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/refserver"
)

// TestLiveCountsAsReport: the live figures count the requests as the
// report's headline does (ok, error answers, no answer), and the last
// ones, taken when the run ended, equal the report's; the live rate is
// of the ok requests, over the run less its setup.
func TestLiveCountsAsReport(t *testing.T) {
	t.Parallel()
	var lr lastLive
	rep, err := Run(context.Background(), Target{URL: fakeHTTP(t)}, mustCalls(t, "ping", "boom", "refuse"), WithRequests(30), lr.option())
	if err != nil {
		t.Fatal(err)
	}
	last := lr.get()
	if rep.OK == 0 || rep.ErrorAnswers == 0 || rep.NoAnswer == 0 || last.OK != rep.OK || last.ErrorAnswers != rep.ErrorAnswers || last.NoAnswer != rep.NoAnswer ||
		last.Requests != rep.Requests || last.Rate <= 0 || last.Rate > 1.01*float64(rep.OK)/(last.Elapsed-rep.Setup).Seconds() {
		t.Errorf("last live figures %+v; report %d ok, %d error answers, %d no answer of %d", last, rep.OK, rep.ErrorAnswers, rep.NoAnswer, rep.Requests)
	}
}

// lastLive keeps the last live figures of a run.
type lastLive struct {
	mu sync.Mutex
	l  Live
}

// option is WithLive every DefaultInterval, keeping the figures.
func (lr *lastLive) option() Option {
	return WithLive(DefaultInterval, func(l Live) { lr.mu.Lock(); lr.l = l; lr.mu.Unlock() })
}

// get returns the last figures.
func (lr *lastLive) get() Live {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	return lr.l
}

// TestLiveRateLeavesSetupOut: the live ok/s is over the run less its
// setup, as the report's is: a closed-model run whose setup takes 400 ms
// and whose ten requests take about 200 ms ends with a live rate near the
// report's (it was over the whole run, a third of it).
func TestLiveRateLeavesSetupOut(t *testing.T) {
	t.Parallel()
	var lr lastLive
	url := refHTTP(t, refserver.HTTPConfig{})
	rep, err := Run(context.Background(), Target{URL: url}, mustCalls(t, `tools/call sleep {"ms":20}`),
		WithRequests(10), WithSetupCalls(mustCalls(t, `tools/call sleep {"ms":400}`)), WithTimeout(10*time.Second), lr.option())
	if err != nil {
		t.Fatal(err)
	}
	last := lr.get()
	answering := rep.Duration - rep.Setup
	if rep.OK != 10 || rep.Setup < 400*time.Millisecond || answering <= 0 {
		t.Fatalf("%d ok, setup %v, duration %v: want 10 ok after a 400 ms setup", rep.OK, rep.Setup, rep.Duration)
	}
	want := float64(rep.OK) / answering.Seconds()
	if last.Rate < 0.75*want || last.Rate > 1.25*want {
		t.Errorf("last live rate %.1f ok/s (elapsed %v), want about the report's %.1f ok/s (setup %v left out)", last.Rate, last.Elapsed, want, rep.Setup)
	}
}
