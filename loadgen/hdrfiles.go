package loadgen

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/mcptape/mcptape/internal/privfile"
)

// hgrmTicks is the number of percentile lines per halving of the
// distance to 100%, as in HdrHistogram's own output.
const hgrmTicks = 5

// WriteHgrm writes h as an HdrHistogram percentile distribution (the
// .hgrm text the HdrHistogram plotter reads), values in milliseconds.
func WriteHgrm(w io.Writer, h *hdrhistogram.Histogram) error {
	const scale = 1e6 // ns per ms
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)")
	// cumulative counts by bucket, to give the count at or below a value
	var tos, cum []int64
	var run int64
	for _, b := range h.Distribution() {
		if b.Count > 0 {
			run += b.Count
			tos, cum = append(tos, b.To), append(cum, run)
		}
	}
	countAt := func(v int64) int64 { // values in buckets up to v's
		i := sort.Search(len(tos), func(i int) bool { return tos[i] >= v })
		if i == len(tos) {
			return run
		}
		return cum[i]
	}
	total := h.TotalCount()
	for p := 0.0; total > 0; {
		v := h.ValueAtPercentile(p)
		q := p / 100
		if p >= 100 || countAt(v) >= total && p > 0 {
			fmt.Fprintf(bw, "%12.3f %2.12f %10d\n", float64(h.Max())/scale, 1.0, total)
			break
		}
		fmt.Fprintf(bw, "%12.3f %2.12f %10d %14.2f\n", float64(v)/scale, q, countAt(v), 1/(1-q))
		// the step halves each time the distance to 100% halves
		halvings := math.Floor(math.Log2(100 / (100 - p)))
		p += 100 / (hgrmTicks * math.Pow(2, halvings+1))
	}
	fmt.Fprintf(bw, "#[Mean    = %12.3f, StdDeviation   = %12.3f]\n", h.Mean()/scale, h.StdDev()/scale)
	fmt.Fprintf(bw, "#[Max     = %12.3f, Total count    = %12d]\n", float64(h.Max())/scale, total)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("loadgen: write hgrm: %w", err)
	}
	return nil
}

// fileName turns a series name into a file name ("tools/call echo" ->
// "tools_call_echo").
func fileName(series string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		}
		return '_'
	}, series)
}

// WriteHgrmDir writes one SERIES.hgrm file per series into dir (created
// 0700 if needed; files 0600).
func (rep *Report) WriteHgrmDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("loadgen: hgrm: %w", err)
	}
	for i := range rep.Series {
		s := &rep.Series[i]
		h, err := s.Hist()
		if err != nil {
			return fmt.Errorf("loadgen: hgrm: %w", err)
		}
		path := filepath.Join(dir, fileName(s.Name)+".hgrm")
		f, err := privfile.Create(path)
		if err != nil {
			return fmt.Errorf("loadgen: hgrm: %w", err)
		}
		werr := WriteHgrm(f, h)
		if err := errors.Join(werr, f.Close()); err != nil {
			return fmt.Errorf("loadgen: hgrm %s: %w", path, err)
		}
	}
	return nil
}

// intervalLog writes the HdrHistogram interval log of a run (WithHlog):
// every interval, one histogram per series of the values recorded in that
// interval, tagged with the series name (spaces become '_').
type intervalLog struct {
	mu    sync.Mutex // guards rec, from
	rec   intervalRecorder
	from  time.Time
	w     *hdrhistogram.HistogramLogWriter
	err   error // first write error
	every time.Duration
}

func newIntervalLog(w io.Writer, every time.Duration, start time.Time) *intervalLog {
	l := &intervalLog{from: start, w: hdrhistogram.NewHistogramLogWriter(w), every: every}
	ms := start.UnixMilli()
	l.w.SetBaseTime(ms)
	l.err = errors.Join(l.w.OutputLogFormatVersion(), l.w.OutputStartTime(ms), l.w.OutputBaseTime(ms), l.w.OutputLegend())
	return l
}

// record adds v to the current interval of each series.
func (l *intervalLog) record(names []string, v int64) {
	l.mu.Lock()
	l.rec.record(names, v)
	l.mu.Unlock()
}

// flush writes the current interval, ending at now, and starts the next.
// Series with nothing recorded in the interval are left out.
func (l *intervalLog) flush(now time.Time) {
	l.mu.Lock()
	cur, from := l.rec.take(), l.from
	l.from = now
	l.mu.Unlock()
	names := make([]string, 0, len(cur))
	for n, h := range cur {
		if h.TotalCount() > 0 {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		h := cur[n]
		h.SetTag(strings.Map(func(r rune) rune {
			if r == ' ' || r == ',' || r == '\r' || r == '\n' {
				return '_'
			}
			return r
		}, n))
		h.SetStartTimeMs(from.UnixMilli())
		h.SetEndTimeMs(max(now.UnixMilli(), from.UnixMilli()+1))
		if err := l.w.OutputIntervalHistogram(h); err != nil && l.err == nil {
			l.err = err
		}
	}
	resetAll(cur)
	l.mu.Lock()
	l.rec.giveBack(cur)
	l.mu.Unlock()
}

// run flushes every interval until done is closed, then once more.
func (l *intervalLog) run(done <-chan struct{}) {
	t := time.NewTicker(l.every)
	defer t.Stop()
	for {
		select {
		case now := <-t.C:
			l.flush(now)
		case <-done:
			l.flush(time.Now())
			return
		}
	}
}
