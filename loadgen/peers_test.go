package loadgen

import (
	"context"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/internal/refserver"
)

// peerCase is one load run against a real peer with exact expectations.
type peerCase struct {
	name     string
	target   func(t *testing.T, ctx context.Context) Target
	calls    []string
	opts     []Option
	requests int64
	setups   int64
	progress int64 // notifications expected per call (with WithProgress)
}

// TestRealPeers runs closed-model loads against real MCP servers and
// checks every count: the TypeScript server-everything over Streamable
// HTTP (echo, and the long-running operation with progress) and stdio,
// the Go SDK everything-server stateful and stateless, and the reference
// server in its stateless 2026-07-28 mode with progress.
func TestRealPeers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real peers")
	}
	cases := []peerCase{
		{name: "server-everything http echo", requests: 60, setups: 3, opts: []Option{WithSessions(3), WithInFlight(2)},
			target: func(t *testing.T, ctx context.Context) Target {
				return Target{URL: peertest.EverythingHTTP(t, ctx).URL}
			},
			calls: []string{`tools/call echo {"message":"hi"}`}},
		{name: "server-everything http progress", requests: 4, setups: 2, progress: 3, opts: []Option{WithSessions(2), WithProgress()},
			target: func(t *testing.T, ctx context.Context) Target {
				return Target{URL: peertest.EverythingHTTP(t, ctx).URL}
			},
			calls: []string{`tools/call trigger-long-running-operation {"duration":0.3,"steps":3}`}},
		{name: "server-everything stdio echo", requests: 40, setups: 2, opts: []Option{WithSessions(2), WithInFlight(4)},
			target: func(t *testing.T, ctx context.Context) Target {
				return Target{Command: append(peertest.ServerEverything(t), "stdio")}
			},
			calls: []string{`tools/call echo {"message":"hi"}`}},
		{name: "server-everything legacy sse echo", requests: 30, setups: 2, opts: []Option{WithSessions(2), WithInFlight(2)},
			target: func(t *testing.T, ctx context.Context) Target { return Target{SSE: peertest.EverythingSSE(t, ctx).URL} },
			calls:  []string{`tools/call echo {"message":"hi"}`}},
		{name: "go everything-server stateful", requests: 60, setups: 3, opts: []Option{WithSessions(3), WithInFlight(2)},
			target: func(t *testing.T, ctx context.Context) Target {
				return Target{URL: peertest.GoEverythingHTTP(t, ctx, false).URL}
			},
			calls: []string{`tools/call test_simple_text`, `tools/list`}},
		{name: "go everything-server stateless", requests: 40, setups: 2, opts: []Option{WithSessions(2)},
			target: func(t *testing.T, ctx context.Context) Target {
				return Target{URL: peertest.GoEverythingHTTP(t, ctx, true).URL}
			},
			calls: []string{`tools/call test_simple_text`}},
		{name: "reference 2026-07-28 progress", requests: 6, setups: 2, progress: 2, opts: []Option{WithSessions(2), WithProgress(), WithProtocolVersion("2026-07-28")},
			target: func(t *testing.T, ctx context.Context) Target {
				return Target{URL: refHTTP(t, refserver.HTTPConfig{Stateless: true})}
			},
			calls: []string{`tools/call sleep {"ms":40,"steps":2}`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			target := c.target(t, ctx)
			opts := append([]Option{WithRequests(c.requests), WithTimeout(20 * time.Second)}, c.opts...)
			rep, err := Run(ctx, target, mustCalls(t, c.calls...), opts...)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Requests != c.requests || rep.Answered != c.requests || rep.ErrorTotal != 0 || rep.Setups != c.setups {
				t.Fatalf("sent %d answered %d setups %d errors %+v; want %d, %d setups, none", rep.Requests, rep.Answered, rep.Setups, rep.Errors, c.requests, c.setups)
			}
			if s := rep.Find("tools/call"); s == nil || s.Count == 0 {
				t.Fatalf("no tools/call series: %+v", rep.Series)
			}
			if c.progress > 0 {
				p := rep.Progress
				if p == nil || p.CallsWithProgress != c.requests || p.Notifications != c.progress*c.requests || p.AfterResponse+p.NotIncreasing+p.UnknownToken != 0 {
					t.Fatalf("progress %+v, want %d calls with %d each", p, c.requests, c.progress)
				}
				if s := rep.Find("tools/call " + mustCalls(t, c.calls[0])[0].Tool + firstProgressSuffix); s == nil || s.Count != c.requests {
					t.Errorf("first progress series: %+v", s)
				}
			}
		})
	}
}

// TestRealPeersBatchesAndCancel checks how real peers answer batches and
// cancellations, as the report tells it: server-everything accepts batches
// over HTTP and silently drops them over stdio (seen by the ping after
// each batch, within BatchGrace rather than the timeout), the Go
// SDK everything-server rejects them with 400 from 2025-06-18; a cancelled
// long-running operation of server-everything is never answered, over HTTP
// (the generator closes the stream itself) and over stdio.
func TestRealPeersBatchesAndCancel(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real peers")
	}
	everythingHTTP := func(t *testing.T, ctx context.Context) Target {
		return Target{URL: peertest.EverythingHTTP(t, ctx).URL}
	}
	everythingStdio := func(t *testing.T, ctx context.Context) Target {
		return Target{Command: append(peertest.ServerEverything(t), "stdio")}
	}
	batchCases := []struct {
		name    string
		target  func(t *testing.T, ctx context.Context) Target
		call    string
		outcome string
	}{
		{"server-everything http", everythingHTTP, `tools/call echo {"message":"hi"}`, BatchAccepted},
		{"server-everything stdio", everythingStdio, `tools/call echo {"message":"hi"}`, BatchDropped},
		{"go everything-server stateful", func(t *testing.T, ctx context.Context) Target {
			return Target{URL: peertest.GoEverythingHTTP(t, ctx, false).URL}
		}, `tools/call test_simple_text`, BatchRejected + "400"},
	}
	for _, c := range batchCases {
		t.Run("batch "+c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			rep, err := Run(ctx, c.target(t, ctx), mustCalls(t, c.call), WithSessions(2), WithRequests(12), WithBatch(3),
				WithTimeout(30*time.Second), WithNotice(func(string) {}))
			if err != nil {
				t.Fatal(err)
			}
			if setup := rep.Find(SetupSeries); setup == nil || rep.Duration-setup.Max > 2*BatchGrace+10*time.Second {
				t.Errorf("4 batches took %v: waited for the 30 s timeout", rep.Duration)
			}
			if rep.Batch == nil || outcome(rep.Batch, c.outcome) != 4 || len(rep.Batch.Outcomes) != 1 || rep.Batch.InSpec {
				t.Fatalf("batch report %+v, want 4 %q", rep.Batch, c.outcome)
			}
		})
	}
	cancelCases := []struct {
		name   string
		target func(t *testing.T, ctx context.Context) Target
	}{
		{"server-everything http", everythingHTTP},
		{"server-everything stdio", everythingStdio},
	}
	for _, c := range cancelCases {
		t.Run("cancel "+c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			rep, err := Run(ctx, c.target(t, ctx), mustCalls(t, `tools/call trigger-long-running-operation {"duration":5,"steps":5}`),
				WithSessions(2), WithRequests(4), WithCancel(100*time.Millisecond, 1), WithTimeout(20*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			// Each session: two calls, each cancelled after 100 ms and watched
			// for at most CancelQuietWindow; never the 5 s operation.
			setup := rep.Find(SetupSeries)
			// (2 s to spare on a loaded machine, far below the 10 s of waiting)
			if setup == nil || rep.Duration-setup.Max > 2*(100*time.Millisecond+CancelQuietWindow)+2*time.Second {
				t.Errorf("measured %v with setup %+v: the generator waited for answers that never come", rep.Duration, setup)
			}
			if cr := rep.Cancel; cr == nil || cr.Sent != 4 || cr.AnsweredAnyway != 0 || rep.ErrorTotal != 0 {
				t.Fatalf("cancel %+v errors %v", rep.Cancel, rep.Errors)
			}
		})
	}
}
