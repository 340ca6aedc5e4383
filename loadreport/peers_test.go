package loadreport

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/loadgen"
)

// TestRealPeers runs rate stages and a capacity search against real MCP
// servers (the TypeScript server-everything over Streamable HTTP and
// stdio, the Go SDK everything-server) and draws both reports. The stages'
// schedule is exact (10 + 20 + 10 arrivals); the search stays well below
// what any of them holds (20/s then 40/s, the cap), so it must find 40/s.
func TestRealPeers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real peers")
	}
	cases := []struct {
		name   string
		target func(t *testing.T, ctx context.Context) loadgen.Target
		call   string
	}{
		{"server-everything http", func(t *testing.T, ctx context.Context) loadgen.Target {
			return loadgen.Target{URL: peertest.EverythingHTTP(t, ctx).URL}
		}, `tools/call echo {"message":"hi"}`},
		{"server-everything stdio", func(t *testing.T, ctx context.Context) loadgen.Target {
			return loadgen.Target{Command: append(peertest.ServerEverything(t), "stdio")}
		}, `tools/call echo {"message":"hi"}`},
		{"go everything-server", func(t *testing.T, ctx context.Context) loadgen.Target {
			return loadgen.Target{URL: peertest.GoEverythingHTTP(t, ctx, false).URL}
		}, `tools/call test_simple_text`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
			defer cancel()
			target := c.target(t, ctx)
			workload := calls(t, c.call)
			stages := []loadgen.Stage{{Duration: 500 * time.Millisecond, Target: 40, Rate: true},
				{Duration: 500 * time.Millisecond, Target: 40, Rate: true}, {Duration: 500 * time.Millisecond, Target: 0, Rate: true}}
			staged, err := loadgen.Run(ctx, target, workload, loadgen.WithStages(stages), loadgen.WithSessions(2),
				loadgen.WithIntervals(100*time.Millisecond), loadgen.WithTimeout(20*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			var sum int64
			for _, st := range staged.Stages {
				sum += st.Figures.Requests
			}
			if staged.Requests != 40 || staged.Answered != 40 || staged.ErrorTotal != 0 || len(staged.Stages) != 3 || sum != 40 {
				t.Fatalf("staged: sent %d answered %d errors %v stages %d (%d requests)", staged.Requests, staged.Answered, staged.Errors, len(staged.Stages), sum)
			}
			th, _ := loadgen.ParseThreshold("errors<1%")
			lat, _ := loadgen.ParseThreshold("tools/call:p99<2s")
			capRep, err := loadgen.FindMax(ctx, target, workload, loadgen.FindMaxConfig{Thresholds: []loadgen.Threshold{th, lat}, Start: 20, MaxRate: 40,
				Step: 500 * time.Millisecond, Warmup: 200 * time.Millisecond}, loadgen.WithSessions(2), loadgen.WithTimeout(20*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if cr := capRep.Capacity; !cr.Found || cr.Rate != 40 || len(cr.Steps) != 2 || cr.Upper != 0 {
				t.Fatalf("capacity %+v", cr)
			}
			for _, r := range []*loadgen.Report{staged, capRep} {
				var b bytes.Buffer
				if err := WriteHTML(&b, c.name, Run{Name: c.name, Report: r}); err != nil {
					t.Fatal(err)
				}
				if n := strings.Count(b.String(), `<polyline class="series"`); n < 4 {
					t.Errorf("%d lines drawn", n)
				}
			}
		})
	}
}
