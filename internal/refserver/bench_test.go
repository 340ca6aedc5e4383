package refserver

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkStdio serves s over in-process pipes the plain SDK way, without
// ServeStdio's EOF drain (its pump and tracker): the baseline of
// BenchmarkStdioOverhead.
func sdkStdio(b *testing.B, s *mcp.Server) *mcp.ClientSession {
	b.Helper()
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	ss, err := s.Connect(context.Background(), &mcp.IOTransport{Reader: c2sR, Writer: s2cW, MaxLineLength: MaxFrameBytes}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).
		Connect(context.Background(), &mcp.IOTransport{Reader: s2cR, Writer: c2sW, MaxLineLength: -1}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	return cs
}

// BenchmarkStdioOverhead measures what ServeStdio's EOF drain (a pipe, a
// line splitter and the call tracker) costs per call against the SDK's own
// stdio serving of the same server: one call on each, alternately, per
// iteration, so that both see the same machine load. It reports the time
// per call of each and their ratio, ours/sdk (1 means no overhead).
func BenchmarkStdioOverhead(b *testing.B) {
	cases := []struct {
		name string
		tool string
		args map[string]any
	}{
		{"echo", "echo", map[string]any{"message": "hello"}},
		{"blob-1MiB", "blob", map[string]any{"bytes": 1 << 20}},
		{"echo-256KiB", "echo", map[string]any{"message": blobText(256 << 10)}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			s := newServer(b)
			ours := connect(b, s, onStdio, "", nil)
			sdk := sdkStdio(b, s)
			params := &mcp.CallToolParams{Name: c.tool, Arguments: c.args}
			ctx := context.Background()
			var oursT, sdkT time.Duration
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				if _, err := ours.CallTool(ctx, params); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if _, err := sdk.CallTool(ctx, params); err != nil {
					b.Fatal(err)
				}
				oursT += t1.Sub(t0)
				sdkT += time.Since(t1)
			}
			b.ReportMetric(float64(oursT.Nanoseconds())/float64(b.N), "ours-ns/call")
			b.ReportMetric(float64(sdkT.Nanoseconds())/float64(b.N), "sdk-ns/call")
			b.ReportMetric(float64(oursT)/float64(sdkT), "ours/sdk")
		})
	}
}
