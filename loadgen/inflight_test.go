package loadgen

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
)

// TestLiveOldestInFlight: a request the server holds shows in the live
// figures while it is held, as the age of the oldest request in flight,
// though the p99 (of the answers) stays that of the quick ones; once
// answered it is no longer in flight.
func TestLiveOldestInFlight(t *testing.T) {
	release := make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		info := jsonrpc.Classify(body)
		if info.Kind != jsonrpc.KindRequest {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		result := `{}`
		switch info.Method {
		case "initialize":
			result = `{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"hold","version":"1"}}`
		case "hold":
			select {
			case <-release:
			case <-r.Context().Done():
			}
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":%s}`, info.ID.Raw, result)
	}))
	t.Cleanup(ts.Close)

	var mu sync.Mutex
	var lives []Live
	once := sync.Once{}
	live := WithLive(20*time.Millisecond, func(l Live) {
		mu.Lock()
		lives = append(lives, l)
		mu.Unlock()
		if l.Oldest >= 400*time.Millisecond {
			once.Do(func() { close(release) })
		}
	})
	// the first "hold" is held until the live figures saw it held
	calls := mustCalls(t, "hold", "ping")
	rep, err := Run(context.Background(), Target{URL: ts.URL + "/mcp"}, calls, WithSessions(2), WithInFlight(2),
		WithDuration(1500*time.Millisecond), WithTimeout(10*time.Second), live)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var stalled *Live
	for i := range lives {
		if l := &lives[i]; l.Oldest >= 400*time.Millisecond && l.InFlight > 0 {
			stalled = l
			break
		}
	}
	if stalled == nil {
		t.Fatalf("no live figures showed the held request in flight for 400ms: %+v", lives)
	}
	if stalled.P99 >= 400*time.Millisecond {
		t.Errorf("p99 %v while the held request was in flight: want only the quick answers in it", stalled.P99)
	}
	if last := lives[len(lives)-1]; last.InFlight != 0 || last.Oldest != 0 {
		t.Errorf("at the end: %d in flight, oldest %v", last.InFlight, last.Oldest)
	}
	if h := rep.Find("hold"); h == nil || h.Max < 300*time.Millisecond {
		t.Errorf("hold series %+v: want the held request's wait as its max", h)
	}
}

// TestInflightOldest: the oldest age is that of the earliest start still
// in flight, to the bucket, and 0 once none is.
func TestInflightOldest(t *testing.T) {
	var f inflight
	now := time.Now()
	a, b := now.Add(-3*time.Second), now.Add(-time.Second)
	f.add(a, 1)
	f.add(b, 2)
	if got := f.oldest(now); got < 3*time.Second || got > 3*time.Second+inflightBucket || f.n != 3 {
		t.Errorf("oldest %v of %d, want 3s of 3", got, f.n)
	}
	f.add(a, -1)
	if got := f.oldest(now); got < time.Second || got > time.Second+inflightBucket {
		t.Errorf("oldest %v, want 1s", got)
	}
	f.add(b, -2)
	if got := f.oldest(now); got != 0 || f.n != 0 || len(f.buckets) != 0 {
		t.Errorf("oldest %v of %d (%d buckets), want none", got, f.n, len(f.buckets))
	}
}
