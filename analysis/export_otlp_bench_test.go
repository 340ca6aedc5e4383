package analysis

import (
	"context"
	"io"
	"testing"
	"time"
)

// BenchmarkExportOTLP measures export --format otlp against inspect on a
// tape of 300,000 messages (the generator of BenchmarkInspect), in one
// run: rounds alternate the paths' order as in BenchmarkInspect, and the
// figures come from median passes. It reports each path's CPU time per
// message (all goroutines: the export reads the tape as inspect does,
// decompressing ahead on another core) and the export's CPU as a ratio of
// inspect's, the floor: the export runs an Inspector alongside, so that
// its spans end as inspect says their requests ended.
func BenchmarkExportOTLP(b *testing.B) {
	const n = 300_000
	path := benchTape(b, n)
	ctx := context.Background()
	paths := []*inspectPath{
		inspectFloor(ctx, path),
		{name: "otlp", pass: func(b *testing.B) time.Duration {
			cpu := cpuTime() // mcptape export --format otlp runs with the default GOGC
			st, err := Export(ctx, path, io.Discard, ExportOTLP)
			if err != nil {
				b.Fatal(err)
			}
			if st.Messages != n || st.Entries == 0 {
				b.Fatalf("%d messages, %d spans exported", st.Messages, st.Entries)
			}
			return cpuTime() - cpu
		}},
	}
	runRounds(b, paths)
	cpu := map[string]float64{}
	for _, p := range paths {
		cpu[p.name] = medianDuration(p.cpu).Seconds()
		b.ReportMetric(medianDuration(p.wall).Seconds()*1e3, p.name+"-ms/pass")
		b.ReportMetric(cpu[p.name]*1e9/n, p.name+"-cpu-ns/msg")
	}
	if c := cpu["inspect"]; c > 0 {
		b.ReportMetric(cpu["otlp"]/c, "cpu-otlp/inspect")
	}
}
