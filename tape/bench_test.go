package tape

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// Benchmarks measure each target side by side with its baseline in the
// same loop and report the ratio:
//
//	go test ./tape -run '^$' -bench . -benchtime 3x
//
// BenchmarkWriter: Writer throughput (encode, batch, compress, write to
// io.Discard, on the Writer's two goroutines) against zstd EncodeAll alone
// of the same NDJSON bytes in the same 1 MiB batches; "ratio" is ours over
// baseline throughput (target >= 0.5).
func BenchmarkWriter(b *testing.B) {
	recs := mcpTraffic(20000, 1)
	for _, level := range []int{1, 3} {
		b.Run(fmt.Sprintf("level=%d", level), func(b *testing.B) {
			batches, total := encodeBatches(recs, DefaultFlushBytes)
			enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(level)), zstd.WithEncoderConcurrency(1))
			if err != nil {
				b.Fatal(err)
			}
			defer enc.Close()
			var ours, base clock
			var out []byte
			b.SetBytes(int64(total))
			b.ReportAllocs()
			for b.Loop() {
				ours.measure(func() {
					w, err := NewWriter(io.Discard, testHeader(), WithLevel(level))
					if err != nil {
						b.Fatal(err)
					}
					for _, r := range recs {
						if err := w.Write(r); err != nil {
							b.Fatal(err)
						}
					}
					if err := w.Close(); err != nil {
						b.Fatal(err)
					}
				})
				base.measure(func() {
					for _, batch := range batches {
						out = enc.EncodeAll(batch, out[:0])
					}
				})
			}
			mbs := func(d time.Duration) float64 { return float64(total) * float64(b.N) / d.Seconds() / 1e6 }
			b.ReportMetric(mbs(ours.wall), "ours-MB/s")
			b.ReportMetric(mbs(base.wall), "baseline-MB/s")
			b.ReportMetric(base.wall.Seconds()/ours.wall.Seconds(), "ratio")
			if ours.cpu > 0 {
				b.ReportMetric(mbs(ours.cpu), "ours-MB/cpu-s")
				b.ReportMetric(mbs(base.cpu), "baseline-MB/cpu-s")
				b.ReportMetric(base.cpu.Seconds()/ours.cpu.Seconds(), "cpu-ratio")
			}
		})
	}
}

// clock accumulates the wall and CPU time of the runs it measures. CPU
// time (of the whole process: every goroutine and the GC) makes the figures
// meaningful on a shared machine, where wall time depends on the load.
type clock struct{ wall, cpu time.Duration }

func (c *clock) measure(f func()) {
	w, p := time.Now(), cpuTime()
	f()
	c.wall += time.Since(w)
	c.cpu += cpuTime() - p
}

// encodeBatches encodes recs as NDJSON lines cut into batches as the
// Writer cuts them.
func encodeBatches(recs []*Record, flushBytes int) ([][]byte, int) {
	var batches [][]byte
	var cur []byte
	total := 0
	for _, r := range recs {
		data, _ := checkRecord(r)
		cur = appendRecord(cur, r, classify(r.Frame), data)
		if len(cur) >= flushBytes {
			batches, total, cur = append(batches, cur), total+len(cur), nil
		}
	}
	if len(cur) > 0 {
		batches, total = append(batches, cur), total+len(cur)
	}
	return batches, total
}

// BenchmarkReader: records/s reading 200-byte messages (target >=
// 1,000,000/s on one core: run it with -cpu 1, and see records/cpu-s on a
// busy machine), side by side with two baselines over the same tape:
// "lines" (zstd stream decoding and splitting lines, no parsing: the
// ceiling) and "encoding/json" (the same plus json.Unmarshal of each line
// into a struct: the obvious implementation).
func BenchmarkReader(b *testing.B) {
	const n = 100_000
	data := writeTape(b, messages200(n))
	var ours, lines, stdjson clock
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		ours.measure(func() {
			if got := readCount(b, data); got != n+1 { // + the stats event
				b.Fatalf("read %d records", got)
			}
		})
		lines.measure(func() { baselineLines(b, data, nil) })
		stdjson.measure(func() {
			baselineLines(b, data, func(line []byte) {
				var rec struct {
					Type    string          `json:"type"`
					Time    int64           `json:"time"`
					Session string          `json:"session"`
					Dir     string          `json:"dir"`
					Frame   json.RawMessage `json:"frame"`
				}
				if err := json.Unmarshal(line, &rec); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
	perSec := func(d time.Duration) float64 { return float64(n) * float64(b.N) / d.Seconds() }
	b.ReportMetric(perSec(ours.wall), "records/s")
	b.ReportMetric(lines.wall.Seconds()/ours.wall.Seconds(), "ratio-vs-lines")
	b.ReportMetric(stdjson.wall.Seconds()/ours.wall.Seconds(), "ratio-vs-encoding/json")
	if ours.cpu > 0 {
		b.ReportMetric(perSec(ours.cpu), "records/cpu-s")
		b.ReportMetric(perSec(lines.cpu), "lines-records/cpu-s")
		b.ReportMetric(perSec(stdjson.cpu), "encoding/json-records/cpu-s")
	}
}

func readCount(b *testing.B, data []byte) int {
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	count := 0
	for {
		_, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
		count++
	}
	if r.Warning() != nil {
		b.Fatal(r.Warning())
	}
	return count
}

// baselineLines decodes the tape as one zstd stream and calls each with
// every line.
func baselineLines(b *testing.B, data []byte, each func([]byte)) {
	dec, err := zstd.NewReader(bytes.NewReader(data), zstd.WithDecoderConcurrency(1))
	if err != nil {
		b.Fatal(err)
	}
	defer dec.Close()
	br := bufio.NewReaderSize(dec, 1<<20)
	for {
		line, err := br.ReadSlice('\n')
		if err == io.EOF {
			return
		}
		if err != nil {
			b.Fatal(err)
		}
		if each != nil {
			each(line)
		}
	}
}

// BenchmarkCompression reports the compression ratio (uncompressed over
// compressed bytes) of realistic MCP traffic (initialize, tools/list with
// schemas, tools/call, progress and log notifications, stderr lines) at
// each zstd level, as written by the Writer with its default batches.
func BenchmarkCompression(b *testing.B) {
	recs := mcpTraffic(50000, 2)
	for _, level := range []int{1, 3, 7} {
		b.Run(fmt.Sprintf("level=%d", level), func(b *testing.B) {
			var st Stats
			for b.Loop() {
				w, err := NewWriter(io.Discard, testHeader(), WithLevel(level))
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range recs {
					w.Write(r)
				}
				w.Close()
				st = w.Stats()
			}
			b.SetBytes(st.Bytes)
			b.ReportMetric(float64(st.Bytes)/float64(st.Compressed), "ratio")
			b.ReportMetric(float64(st.Bytes)/1e6, "MB-in")
		})
	}
}

// BenchmarkReaderHugeRecord: reading a tape holding one 64 MiB message
// (a frame the Reader decodes as a stream, in block-sized chunks), side by
// side with the baseline of decoding the same tape with zstd alone and
// finding its newlines (the ceiling). "ratio" is ours over baseline
// throughput; MB/s count the decompressed bytes. A Reader that searches the
// pending line again on every chunk is quadratic here: about 5 s a read.
func BenchmarkReaderHugeRecord(b *testing.B) {
	const size = 64 << 20
	prefix, suffix := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"`, `"}]}}`
	frame := make([]byte, 0, size)
	frame = append(frame, prefix...)
	for i := 0; len(frame) < size-len(suffix); i++ {
		frame = append(frame, 'a'+byte((i*7+i/13)%26))
	}
	frame = append(frame, suffix...)
	data := writeTape(b, []*Record{{Type: TypeMessage, Time: 1, Dir: ServerToClient, Frame: frame}})
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		b.Fatal(err)
	}
	defer dec.Close()
	plain, err := dec.DecodeAll(data, nil)
	if err != nil {
		b.Fatal(err)
	}
	var ours, base clock
	var out []byte
	b.SetBytes(int64(len(plain)))
	for b.Loop() {
		ours.measure(func() {
			if got := readCount(b, data); got != 2 { // + the stats event
				b.Fatalf("read %d records", got)
			}
		})
		base.measure(func() {
			out, err = dec.DecodeAll(data, out[:0])
			if err != nil || bytes.Count(out, []byte{'\n'}) != 3 {
				b.Fatalf("baseline: %v", err)
			}
		})
	}
	mbs := func(d time.Duration) float64 { return float64(len(plain)) * float64(b.N) / d.Seconds() / 1e6 }
	b.ReportMetric(mbs(ours.wall), "ours-MB/s")
	b.ReportMetric(mbs(base.wall), "baseline-MB/s")
	b.ReportMetric(base.wall.Seconds()/ours.wall.Seconds(), "ratio")
	if ours.cpu > 0 {
		b.ReportMetric(base.cpu.Seconds()/ours.cpu.Seconds(), "cpu-ratio")
	}
}
