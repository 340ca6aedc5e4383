package loadgen

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// TestEncodeHist: encodeHist's bytes decode (hdrhistogram.Decode) to the
// histogram encoded, as the library's own encoding does, and fill's
// percentiles in one pass are those of ValueAtPercentile, for empty,
// sparse, dense and extreme histograms.
func TestEncodeHist(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tests := []struct {
		name   string
		record func(h *hdrhistogram.Histogram)
	}{
		{"empty", func(*hdrhistogram.Histogram) {}},
		{"one value", func(h *hdrhistogram.Histogram) { h.RecordValue(1) }},
		{"the largest value", func(h *hdrhistogram.Histogram) { h.RecordValue(histMax) }},
		{"latencies", func(h *hdrhistogram.Histogram) {
			for range 5000 {
				h.RecordValue(int64(2e5 + rng.ExpFloat64()*3e6))
			}
		}},
		{"spread", func(h *hdrhistogram.Histogram) {
			for range 2000 {
				h.RecordValue(1 + rng.Int64N(histMax))
			}
		}},
		{"huge counts", func(h *hdrhistogram.Histogram) { // counts of 9 LEB128 bytes
			h.RecordValues(1000, math.MaxInt64/4)
			h.RecordValues(5e9, math.MaxInt64/4)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHist()
			tc.record(h)
			got, err := hdrhistogram.Decode([]byte(encodeHist(h)))
			if err != nil {
				t.Fatal(err)
			}
			lib, _ := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
			want, err := hdrhistogram.Decode(lib)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equals(h) || !got.Equals(want) || got.TotalCount() != h.TotalCount() {
				t.Errorf("decoded %d values (max %d), encoded %d (max %d)", got.TotalCount(), got.Max(), h.TotalCount(), h.Max())
			}
			p := h.ValueAtPercentilesSlice(fillPercentiles[:])
			for i, q := range fillPercentiles[:len(fillPercentiles)-1] {
				if p[i] != h.ValueAtPercentile(q) {
					t.Errorf("p%v: %d in one pass, %d alone", q, p[i], h.ValueAtPercentile(q))
				}
			}
			if last := p[len(p)-1]; last != h.Max() {
				t.Errorf("p100 %d in one pass, Max %d", last, h.Max())
			}
		})
	}
}

// BenchmarkEncodeHist: encoding an interval's histogram (1,500 latencies)
// with encodeHist, and with the library's Encode (baseline).
func BenchmarkEncodeHist(b *testing.B) {
	h := newHist()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1500 {
		h.RecordValue(int64(5e6 + rng.ExpFloat64()*10e6))
	}
	b.Run("ours", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			encodeHist(h)
		}
	})
	b.Run("library", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		}
	})
}

// TestEncodeHistKeepsWriter: encoding a histogram after collections
// allocates no new deflate writer (a sync.Pool lost it at every other
// collection, and a generator collects several times an interval).
func TestEncodeHistKeepsWriter(t *testing.T) {
	h := newHist()
	h.RecordValue(12345)
	encodeHist(h)
	counts := int64(len(h.Export().Counts)) * 8 // the copy encodeHist reads
	for range 3 {
		runtime.GC()
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		encodeHist(h)
		runtime.ReadMemStats(&after)
		if n := int64(after.TotalAlloc - before.TotalAlloc); n > counts+32<<10 {
			t.Fatalf("an encoding allocated %d bytes, the counts are %d", n, counts)
		}
	}
}
