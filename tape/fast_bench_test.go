package tape

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
)

// BenchmarkReaderShared: records/s of the fast path, side by side in one
// loop with Next (the copying reader) and with the "lines" baseline of
// BenchmarkReader (zstd stream decoding and line splitting: the ceiling).
// "classified" reads with NextClassified and "next+classify" is what it
// replaces: Next, then jsonrpc.Classify of each frame. Run it with -cpu 1.
func BenchmarkReaderShared(b *testing.B) {
	const n = 100_000
	data := writeTape(b, messages200(n))
	var next, shared, classified, nextClassify, lines clock
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		next.measure(func() { readCount(b, data) })
		shared.measure(func() {
			readSharedCount(b, data, func(r *Reader, rec *Record) error { return r.NextShared(rec) })
		})
		var info jsonrpc.Info
		classified.measure(func() {
			readSharedCount(b, data, func(r *Reader, rec *Record) error { return r.NextClassified(rec, &info) })
		})
		nextClassify.measure(func() {
			readSharedCount(b, data, func(r *Reader, rec *Record) error {
				p, err := r.Next()
				if err == nil && p.Type == TypeMessage {
					info = jsonrpc.Classify(p.Frame)
				}
				return err
			})
		})
		lines.measure(func() { baselineLines(b, data, nil) })
	}
	perSec := func(d time.Duration) float64 { return float64(n) * float64(b.N) / d.Seconds() }
	b.ReportMetric(perSec(shared.wall), "records/s")
	b.ReportMetric(lines.wall.Seconds()/shared.wall.Seconds(), "ratio-vs-lines")
	b.ReportMetric(next.wall.Seconds()/shared.wall.Seconds(), "x-faster-than-Next")
	b.ReportMetric(nextClassify.wall.Seconds()/classified.wall.Seconds(), "classified-x-faster-than-Next+Classify")
	if shared.cpu > 0 {
		b.ReportMetric(perSec(shared.cpu), "records/cpu-s")
		b.ReportMetric(perSec(next.cpu), "Next-records/cpu-s")
		b.ReportMetric(perSec(classified.cpu), "classified-records/cpu-s")
		b.ReportMetric(perSec(nextClassify.cpu), "Next+Classify-records/cpu-s")
		b.ReportMetric(perSec(lines.cpu), "lines-records/cpu-s")
	}
}

func readSharedCount(b *testing.B, data []byte, next func(*Reader, *Record) error) {
	const want = 100_001 // + the stats event
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	var rec Record
	count := 0
	for {
		err := next(r, &rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		count++
	}
	if r.Warning() != nil || count != want {
		b.Fatalf("%d records, warning %v", count, r.Warning())
	}
}
