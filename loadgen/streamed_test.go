package loadgen

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/refserver"
)

// TestStreamedCallsFirstChunkAndComplete loads the reference server's
// streamed chat tool: each call counts once, at its end part, and gets
// the first-chunk and complete series and its usage tokens.
func TestStreamedCallsFirstChunkAndComplete(t *testing.T) {
	chat := refserver.Chat{Chunks: 4, Delay: 5 * time.Millisecond}
	s, err := refserver.New(refserver.WithChat(chat))
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(refserver.HTTPHandler(s, refserver.HTTPConfig{Chat: chat}))
	defer ts.Close()
	const n = 12
	rep, err := Run(context.Background(), Target{URL: ts.URL + refserver.Path},
		mustCalls(t, `tools/call chat {"query":"two words"}`), WithSessions(3), WithRequests(n), WithTimeout(10*time.Second))
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
	// Five pauses of 5 ms lie between the first part and the end.
	if complete.Min < 20*time.Millisecond || first.Max >= complete.Min {
		t.Errorf("first chunk max %v, complete min %v: want the end at least 20ms later than any first part", first.Max, complete.Min)
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
	if th, _ := ParseThreshold("tools/call chat:tokens_per_s>1e12"); th.Check(rep) == "" {
		t.Error("an impossible tokens_per_s threshold held")
	}
}
