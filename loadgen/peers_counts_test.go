package loadgen

import (
	"bytes"
	"context"
	"encoding/csv"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
)

// TestRealPeerCounts runs a load against the TypeScript server-everything
// over Streamable HTTP with calls it answers (echo), answers with an error
// (an unknown tool: a result with isError) and holds past the timeout (the
// long-running operation): each request is counted once, in the report as
// in its results line; session setup has no rate; and while the held
// calls are in flight the live figures give their age, though the p99 of
// the answers stays that of the quick ones.
func TestRealPeerCounts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real peer")
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	url := peertest.EverythingHTTP(t, ctx).URL
	var mu sync.Mutex
	var held *Live
	live := WithLive(50*time.Millisecond, func(l Live) {
		mu.Lock()
		defer mu.Unlock()
		if held == nil && l.Oldest >= 800*time.Millisecond {
			held = &l
		}
	})
	var res bytes.Buffer
	calls := mustCalls(t, `10:tools/call echo {"message":"hi"}`, `2:tools/call no-such-tool {}`,
		`1:tools/call trigger-long-running-operation {"duration":10,"steps":2}`)
	rep, err := Run(ctx, Target{URL: url}, calls, WithSessions(2), WithDuration(2*time.Second), WithTimeout(1500*time.Millisecond),
		WithResults(&res, ResultsCSV), live)
	if err != nil {
		t.Fatal(err)
	}
	echo, bad, long := rep.Find("tools/call echo"), rep.Find("tools/call no-such-tool"), rep.Find("tools/call trigger-long-running-operation")
	if echo == nil || bad == nil || long == nil || rep.OK != echo.Requests || rep.ErrorAnswers != bad.Requests || rep.NoAnswer != long.Requests ||
		rep.OK+rep.ErrorAnswers+rep.NoAnswer != rep.Requests || long.Requests == 0 || bad.Requests == 0 {
		t.Fatalf("sent %d: %d ok, %d error answers, %d no answer; series %+v", rep.Requests, rep.OK, rep.ErrorAnswers, rep.NoAnswer, rep.Series)
	}
	recs, err := csv.NewReader(&res).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	counted := map[string]int64{}
	for _, r := range recs[1:] {
		counted[r[6]]++
	}
	if counted[ResultOK] != rep.OK || counted[ResultErrorAnswer] != rep.ErrorAnswers || counted[ResultNoAnswer] != rep.NoAnswer {
		t.Errorf("results lines counted %v; report %d ok, %d error answers, %d no answer", counted, rep.OK, rep.ErrorAnswers, rep.NoAnswer)
	}
	if s := rep.Find(SetupSeries); s == nil || s.Count != 2 || s.Rate != 0 {
		t.Errorf("session setup %+v: want 2, no rate", s)
	}
	mu.Lock()
	defer mu.Unlock()
	if held == nil || held.InFlight == 0 || held.P99 >= 800*time.Millisecond {
		t.Errorf("live figures while the long operations were held: %+v", held)
	}
}
