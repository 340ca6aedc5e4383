package analysis

import (
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range and precision: 1 ns to 24 h, two significant digits
// (about 40 KiB per histogram). Longer values are recorded as 24 h; the
// exact maximum and mean are kept beside the histogram.
const (
	histMax     = int64(24 * time.Hour)
	histSigFigs = 2
)

// latencyHist is an HDR histogram of nanosecond values with the exact
// count, sum and maximum. The histogram is allocated on first use.
type latencyHist struct {
	h       *hdrhistogram.Histogram
	n       int64
	unknown int64 // durations left out: negative (a clock step back)
	sum     int64
	min     int64
	max     int64
}

func (l *latencyHist) record(ns int64) {
	if ns < 0 { // a clock step back made the end look older than the start: unknown, not 0
		l.unknown++
		return
	}
	if l.h == nil {
		l.h = hdrhistogram.New(1, histMax, histSigFigs)
	}
	if l.n == 0 || ns < l.min {
		l.min = ns
	}
	l.n++
	l.sum += ns
	l.max = max(l.max, ns)
	_ = l.h.RecordValue(min(ns, histMax)) // in range: cannot fail
}

func (l *latencyHist) summary() Latency {
	if l == nil || l.n == 0 {
		if l != nil {
			return Latency{Unknown: l.unknown}
		}
		return Latency{}
	}
	// The histogram gives the top of a value's 1% bucket: keep it within
	// the exact bounds, so that one sample reads the same everywhere.
	clamp := func(v int64) int64 { return min(max(v, l.min), l.max) }
	p := l.h.ValueAtPercentilesSlice([]float64{50, 90, 99})
	return Latency{
		Count:   l.n,
		MeanNS:  l.sum / l.n,
		P50NS:   clamp(p[0]),
		P90NS:   clamp(p[1]),
		P99NS:   clamp(p[2]),
		MaxNS:   l.max,
		Unknown: l.unknown,
	}
}
