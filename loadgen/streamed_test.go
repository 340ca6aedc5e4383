package loadgen

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/jsonrpc"
)

// TestStreamedCallsFirstChunkAndComplete loads the reference server's
// streamed chat tool: each call counts once, at its end part, and gets
// the first-chunk and complete series and its usage tokens. Over
// Streamable HTTP each call's parts come on its POST's event stream; in
// the LangGraph docs' dialect they all come on the side stream
// /mcp/stream, which the server sends to every session: their ids must
// not meet.
func TestStreamedCallsFirstChunkAndComplete(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  refserver.HTTPConfig
		opts []Option
	}{
		{name: "streamable"},
		{name: "langgraph", cfg: refserver.HTTPConfig{LangGraph: true}, opts: []Option{WithStreamPath(refserver.StreamPath), WithInFlight(2)}},
	} {
		t.Run(tc.name, func(t *testing.T) { testStreamedCalls(t, tc.cfg, tc.opts) })
	}
}

func testStreamedCalls(t *testing.T, cfg refserver.HTTPConfig, opts []Option) {
	chat := refserver.Chat{Chunks: 4, Delay: 5 * time.Millisecond}
	s, err := refserver.New(refserver.WithChat(chat))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Chat = chat
	ids := &idLog{seen: map[string]int{}}
	ts := httptest.NewServer(ids.wrap(refserver.HTTPHandler(s, cfg)))
	defer ts.Close()
	const n = 12
	rep, err := Run(context.Background(), Target{URL: ts.URL + refserver.Path},
		mustCalls(t, `tools/call chat {"query":"two words"}`), append([]Option{WithSessions(3), WithRequests(n), WithTimeout(10 * time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests != n || rep.Answered != n || rep.ErrorTotal != 0 {
		t.Fatalf("requests %d answered %d errors %v, want %d answered, no error", rep.Requests, rep.Answered, rep.Errors, n)
	}
	first, complete, base := rep.Find("tools/call chat"+FirstChunkSuffix), rep.Find("tools/call chat"+CompleteSuffix), rep.Find("tools/call chat")
	if first == nil || complete == nil || base == nil {
		t.Fatalf("series %+v lack the streamed ones", rep.Series)
	}
	if first.Count != n || complete.Count != n || base.Count != n {
		t.Errorf("counts first %d complete %d call %d, want %d each (one sample per call, not per part)", first.Count, complete.Count, base.Count, n)
	}
	// Five pauses of 5 ms lie between a call's first part and its end, so
	// no call completes within 20 ms. Each call's first part comes before
	// its end, so each order statistic of the first parts' times is at
	// most the ends' and the ends come later on the whole; not every first
	// part comes before every end: on a loaded machine a late first part
	// (448 ms under a CPU hog) comes after the quickest end (30 ms).
	if complete.Min < 20*time.Millisecond || first.Min > complete.Min || first.P50 > complete.P50 || first.Max > complete.Max || first.Mean >= complete.Mean {
		t.Errorf("first chunk min/p50/max/mean %v/%v/%v/%v, complete %v/%v/%v/%v: want each first chunk before its end, none complete within 20ms",
			first.Min, first.P50, first.Max, first.Mean, complete.Min, complete.P50, complete.Max, complete.Mean)
	}
	// The reference server counts words: 2 of the query, 11 of the answer.
	if want := int64(n * 13); base.Tokens != want || base.TokensPerSec <= 0 {
		t.Errorf("tokens %d (%v/s), want %d", base.Tokens, base.TokensPerSec, want)
	}
	for _, spec := range []string{"tools/call chat#first_chunk:p99<10s", "tools/call chat:tokens_per_s>1", "tools/call chat#complete:count>=12"} {
		th, err := ParseThreshold(spec)
		if err != nil {
			t.Fatal(err)
		}
		if msg := th.Check(rep); msg != "" {
			t.Errorf("%s: %s", spec, msg)
		}
	}
	if cfg.LangGraph {
		// Every session's stream carries every answer: the sessions'
		// ids must differ, or one would take another's chunks.
		for id, n := range ids.counts() {
			if n > 1 {
				t.Errorf("request id %s sent %d times across the sessions", id, n)
			}
		}
	}
	if th, _ := ParseThreshold("tools/call chat:tokens_per_s>1e12"); th.Check(rep) == "" {
		t.Error("an impossible tokens_per_s threshold held")
	}
}

// idLog notes the ids of the requests POSTed to a handler.
type idLog struct {
	mu   sync.Mutex
	seen map[string]int
}

func (l *idLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			if info := jsonrpc.Classify(body); info.Kind == jsonrpc.KindRequest && info.Method == "tools/call" {
				l.mu.Lock()
				l.seen[info.ID.Key()]++
				l.mu.Unlock()
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	})
}

func (l *idLog) counts() map[string]int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.seen)
}
