package loadgen

import (
	"fmt"
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// mergeStages merges the stages of reports run with the same stages, stage
// by stage, their loads summed; nil when any report has none or they differ (the stages of
// generators with other shapes do not add up).
func mergeStages(reports []*Report) ([]StageReport, error) {
	first := reports[0].Stages
	for _, r := range reports[1:] {
		if len(r.Stages) != len(first) {
			return nil, nil
		}
		for i, s := range r.Stages {
			f := first[i]
			if s.Offset != f.Offset || s.From != f.From || s.Target != f.Target || s.Rate != f.Rate || s.Figures == nil || f.Figures == nil {
				return nil, nil
			}
		}
	}
	out := make([]StageReport, len(first))
	for i := range first {
		figs := make([]*Report, len(reports))
		for j, r := range reports {
			figs[j] = r.Stages[i].Figures
		}
		m, err := Merge(figs...)
		if err != nil {
			return nil, fmt.Errorf("stage %d: %w", i+1, err)
		}
		out[i] = first[i]
		out[i].Figures = m
		out[i].From, out[i].Target = 0, 0
		for _, r := range reports { // the generators' loads add up, as their rates and sessions
			out[i].From += r.Stages[i].From
			out[i].Target += r.Stages[i].Target
		}
	}
	return out, nil
}

// mergeIntervals merges the intervals of reports of runs started together,
// interval by interval (the nth of each, from each run's start): counts
// summed, histograms merged and their percentiles read again; it returns
// them with their width. Reports with intervals of other widths
// (--hlog-interval) give none.
func mergeIntervals(reports []*Report) ([]Interval, time.Duration, error) {
	width, ok := commonIntervalWidth(reports)
	if !ok {
		return nil, 0, nil
	}
	n := 0
	for _, r := range reports {
		n = max(n, len(r.Intervals))
	}
	out := make([]Interval, n)
	for i := range out {
		hists := map[string]*hdrhistogram.Histogram{}
		errs := map[string]int64{}
		seen := false
		for _, r := range reports {
			if i >= len(r.Intervals) {
				continue
			}
			in := r.Intervals[i]
			if !seen || in.Offset < out[i].Offset {
				out[i].Offset = in.Offset
			}
			seen = true
			out[i].Duration = max(out[i].Duration, in.Duration)
			out[i].Requests += in.Requests
			out[i].Answered += in.Answered
			out[i].OK += in.OK
			out[i].ErrorAnswers += in.ErrorAnswers
			out[i].NoAnswer += in.NoAnswer
			out[i].Errors += in.Errors
			out[i].Dropped += in.Dropped
			for _, s := range in.Series {
				errs[s.Name] += s.Errors
				if hists[s.Name] == nil {
					hists[s.Name] = newHist()
				}
				if s.Histogram == "" {
					continue
				}
				h, err := hdrhistogram.Decode([]byte(s.Histogram))
				if err != nil {
					return nil, 0, fmt.Errorf("interval %d: series %q: histogram: %w", i+1, s.Name, err)
				}
				if dropped := hists[s.Name].Merge(h); dropped != 0 {
					return nil, 0, fmt.Errorf("interval %d: series %q: %d values out of range", i+1, s.Name, dropped)
				}
			}
		}
		for name, h := range hists {
			p := h.ValueAtPercentilesSlice(fillPercentiles[:])
			out[i].Series = append(out[i].Series, IntervalSeries{Name: name, Count: h.TotalCount(), Errors: errs[name],
				P50: time.Duration(p[0]), P90: time.Duration(p[1]), P99: time.Duration(p[2]), Max: time.Duration(p[4]),
				Histogram: encodeHist(h)})
		}
		sort.Slice(out[i].Series, func(a, b int) bool { return out[i].Series[a].Name < out[i].Series[b].Name })
	}
	return out, width, nil
}

// commonIntervalWidth returns the width of the intervals of reports, and
// whether they agree (reports without intervals agree with any). A
// report's IntervalWidth is compared as it is: the width its run was asked
// for. A report written before it was recorded has its width estimated
// from its first two intervals' offsets, 10 % apart allowed: the cuts
// come late when the generator is descheduled, and only a report that
// says its width is compared exactly.
func commonIntervalWidth(reports []*Report) (time.Duration, bool) {
	var width, estimated time.Duration
	for _, r := range reports {
		switch {
		case r.IntervalWidth > 0 && len(r.Intervals) > 0:
			if width != 0 && width != r.IntervalWidth {
				return 0, false
			}
			width = r.IntervalWidth
		case len(r.Intervals) >= 2:
			w := r.Intervals[1].Offset - r.Intervals[0].Offset
			if estimated == 0 {
				estimated = w
			} else if d := w - estimated; d > estimated/10 || -d > estimated/10 {
				return 0, false
			}
		}
	}
	if width != 0 && estimated != 0 {
		if d := estimated - width; d > width/10 || -d > width/10 {
			return 0, false
		}
	}
	return width, true
}
