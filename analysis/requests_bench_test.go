package analysis

import (
	"context"
	"io"
	"runtime/debug"
	"testing"
	"time"
)

// BenchmarkExportRequests measures export --format requests (NDJSON, and
// Parquet) against inspect on the tape of 1,000,000 messages of
// BenchmarkInspect, in one run, and reports each export's messages/s as
// a ratio of inspect's (target: at least 0.5). Rounds alternate the
// paths' order as in BenchmarkInspect; ratios come from median passes.
func BenchmarkExportRequests(b *testing.B) {
	const n = 1_000_000
	path := benchTape(b, n)
	ctx := context.Background()
	export := func(f RequestsFormat) func(b *testing.B) time.Duration {
		return func(b *testing.B) time.Duration {
			cpu := cpuTime()
			defer debug.SetGCPercent(debug.SetGCPercent(RecommendedGCPercent)) // as mcptape export runs
			st, err := ExportRequests(ctx, []string{path}, io.Discard, f)
			if err != nil {
				b.Fatal(err)
			}
			if st.Messages != n || st.Rows == 0 {
				b.Fatalf("%d messages, %d rows exported", st.Messages, st.Rows)
			}
			return cpuTime() - cpu
		}
	}
	paths := []*inspectPath{
		inspectFloor(ctx, path),
		{name: "ndjson", pass: export(RequestsNDJSON)},
		{name: "parquet", pass: export(RequestsParquet)},
	}
	runRounds(b, paths)
	sec := map[string]float64{}
	for _, p := range paths {
		sec[p.name] = medianDuration(p.wall).Seconds()
		b.ReportMetric(sec[p.name]*1e3, p.name+"-ms/pass")
	}
	b.ReportMetric(sec["inspect"]/sec["ndjson"], "export-ndjson/inspect")
	b.ReportMetric(sec["inspect"]/sec["parquet"], "export-parquet/inspect")
	b.ReportMetric(n/sec["ndjson"], "export-msgs/s")
}

// inspectFloor is the path the export benchmarks measure against: inspect
// of the tape at path, as mcptape inspect runs (RecommendedGCPercent).
func inspectFloor(ctx context.Context, path string) *inspectPath {
	return &inspectPath{name: "inspect", pass: func(b *testing.B) time.Duration {
		cpu := cpuTime()
		defer debug.SetGCPercent(debug.SetGCPercent(RecommendedGCPercent))
		if _, err := Inspect(ctx, path); err != nil {
			b.Fatal(err)
		}
		return cpuTime() - cpu
	}}
}
