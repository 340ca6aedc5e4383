package loadgen

import (
	"context"
	"sync"
	"testing"
)

// TestLiveCountsAsReport: the live figures count the requests as the
// report's headline does (ok, error answers, no answer), and the last
// ones, taken when the run ended, equal the report's; the live rate is
// of the ok requests.
func TestLiveCountsAsReport(t *testing.T) {
	t.Parallel()
	var lr lastLive
	rep, err := Run(context.Background(), Target{URL: fakeHTTP(t)}, mustCalls(t, "ping", "boom", "refuse"), WithRequests(30), lr.option())
	if err != nil {
		t.Fatal(err)
	}
	last := lr.get()
	if rep.OK == 0 || rep.ErrorAnswers == 0 || rep.NoAnswer == 0 || last.OK != rep.OK || last.ErrorAnswers != rep.ErrorAnswers || last.NoAnswer != rep.NoAnswer ||
		last.Requests != rep.Requests || last.Rate <= 0 || last.Rate > float64(rep.OK)/last.Elapsed.Seconds()+1e-9 {
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
