package loadgen

import (
	"context"
	"runtime"
	"testing"

	"github.com/mcptape/mcptape/internal/http1/http1test"
)

// TestRequestAllocs bounds the allocations of one request of the closed
// model over HTTP (JSON answers) in the whole generator: the transport's
// exchange (see transport's TestSendAllocs; the generator reads no answer
// headers, so each answer's head is parsed into the memory of the last
// one) and nothing of the loop's own
// (the frame is built in the loop's buffer, the call waiting for the
// answer is recycled), against
// a server that allocates nothing. The figure is the difference between
// two runs of different lengths, so that the fixed costs of a run (the
// sessions, the histograms, the report) cancel out.
func TestRequestAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the generator")
	}
	if raceEnabled {
		t.Skip("the race detector changes allocations")
	}
	url := http1test.ServeJSONRPC(t)
	calls := mustCalls(t, `tools/call echo {"message":"hi"}`)
	mallocs := func(n int64) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		rep, err := Run(context.Background(), Target{URL: url}, calls, WithSessions(4), WithRequests(n))
		runtime.ReadMemStats(&after)
		if err != nil || rep.Answered != n {
			t.Fatalf("%v: %d answered of %d, errors %+v", err, rep.Answered, n, rep.Errors)
		}
		return after.Mallocs - before.Mallocs
	}
	mallocs(200) // warm up: pools, the shared client's first connections
	const short, long = 500, 2500
	per := float64(int64(mallocs(long))-int64(mallocs(short))) / (long - short)
	const most = 5
	if per > most {
		t.Errorf("%.1f allocations per request, want at most %d", per, most)
	}
	t.Logf("%.1f allocations per request", per)
}
