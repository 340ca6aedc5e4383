// Package loadreport draws load-test reports (loadgen.Report, as
// "mcptape load --json" writes them) as one self-contained HTML page:
// html/template for the page, inline SVG for the charts, no script and
// nothing fetched.
//
// One run gives its latency percentiles over time (p50, p90, p99, max per
// interval), throughput and errors over time with its stages or
// capacity-search steps marked, the percentile distribution per series
// on the HdrHistogram plotter's log scale, the error reasons and the
// configuration. Two or more runs are drawn overlaid, with the change of
// p50, p99 and throughput per series against the first.
package loadreport

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/mcptape/mcptape/loadgen"
)

// Run is one report to draw and the name it is shown under.
type Run struct {
	Name   string
	Report *loadgen.Report
}

// maxTimeSeries bounds the request series drawn over time (the busiest).
const maxTimeSeries = 4

// WriteHTML writes the page of runs (one: a run's report; two or more: a
// comparison against the first) titled title.
func WriteHTML(w io.Writer, title string, runs ...Run) error {
	if len(runs) == 0 {
		return errors.New("loadreport: no run to draw")
	}
	for _, r := range runs {
		if r.Report == nil {
			return fmt.Errorf("loadreport: run %q has no report", r.Name)
		}
	}
	p := &page{Title: title, Compare: len(runs) > 1}
	for i, r := range runs {
		p.Runs = append(p.Runs, runView(r, palette[i%len(palette)]))
	}
	var err error
	if p.Compare {
		err = p.comparison(runs)
	} else {
		err = p.single(runs[0].Report)
	}
	if err != nil {
		return err
	}
	if err := pageTmpl.Execute(w, p); err != nil {
		return fmt.Errorf("loadreport: %w", err)
	}
	return nil
}

// page is what the template draws.
type page struct {
	Title    string
	Compare  bool
	Runs     []runInfo
	Charts   []*svgChart
	Changes  []change
	Capacity *loadgen.CapacityReport
	Steps    []stepRow
}

// runInfo is one run's configuration and summary.
type runInfo struct {
	Name, Color string
	Config      [][2]string
	Series      []seriesRow
	Errors      []loadgen.ErrorCount
	ErrorTotal  int64
	Stages      []stageRow
}

type seriesRow struct {
	Name, Count, Rate, Errors, P50, P90, P99, P999, Max string
}

type stageRow struct {
	Stage                                        int
	Time, Load, Requests, Rate, Errors, P50, P99 string
}

type stepRow struct {
	Rate, Series, Requests, P50, P99, Errors, Verdict string
	Held                                              bool
}

// change is one series' change from the first run to another.
type change struct {
	Series, Run                    string
	P50A, P50B, P99A, P99B, RA, RB string
	P50D, P99D, RD                 string
	P50Worse, P99Worse, RateWorse  bool
}

func runView(r Run, color string) runInfo {
	rep := r.Report
	ri := runInfo{Name: r.Name, Color: color, Errors: rep.Errors, ErrorTotal: rep.ErrorTotal}
	counts := rep.CountLines(rep.Capacity == nil) // a search's rates are its steps'
	model := rep.Model
	if rep.Model == "open" {
		model += fmt.Sprintf(", %g arrivals/s", rep.Rate)
	}
	ri.Config = [][2]string{{"target", rep.Target}, {"protocol", rep.Protocol}, {"model", model},
		{"sessions", fmt.Sprint(rep.Sessions)}, {"started", rep.Started.UTC().Format(time.RFC3339)},
		{"duration", rep.PhaseText()},
		{"requests", counts[0]}, {"in all", counts[1]}}
	if len(rep.Stages) > 0 && rep.Capacity == nil {
		var specs []string
		for _, s := range rep.Stages {
			specs = append(specs, loadStr(s))
		}
		ri.Config = append(ri.Config, [2]string{"stages", strings.Join(specs, ", ")})
	}
	if rep.Generators > 1 {
		ri.Config = append(ri.Config, [2]string{"generators", fmt.Sprint(rep.Generators)})
	}
	if rep.Failure != "" {
		ri.Config = append(ri.Config, [2]string{"FAILED", rep.Failure})
	}
	if rep.Interrupted {
		ri.Config = append(ri.Config, [2]string{"interrupted", "the run was stopped before its end"})
	}
	for _, w := range rep.Warnings {
		ri.Config = append(ri.Config, [2]string{"warning", w})
	}
	for _, s := range rep.Series {
		row := seriesRow{Name: s.Name, Count: fmt.Sprint(s.Count), Rate: seriesRate(s),
			Errors: fmt.Sprintf("%d (%.1f%%)", s.Errors, 100*s.ErrorRatio()), P50: "-", P90: "-", P99: "-", P999: "-", Max: "-"}
		if s.Count > 0 {
			row.P50, row.P90, row.P99, row.P999, row.Max = ms(s.P50), ms(s.P90), ms(s.P99), ms(s.P999), ms(s.Max)
		}
		ri.Series = append(ri.Series, row)
	}
	if rep.Capacity == nil {
		for _, st := range rep.Stages {
			f := st.Figures
			row := stageRow{Stage: st.Stage, Time: fmt.Sprintf("%s + %s", st.Offset.Round(time.Millisecond), f.Duration.Round(time.Millisecond)),
				Load: loadStr(st), Requests: fmt.Sprint(f.Requests), Errors: fmt.Sprintf("%.2f%%", 100*f.ErrorRatio()), P50: "-", P99: "-"}
			if d := f.Duration.Seconds(); d > 0 {
				row.Rate = fmt.Sprintf("%.1f", float64(f.OK)/d)
			}
			if s := f.Find(busiest(f)); s != nil && s.Count > 0 {
				row.P50, row.P99 = ms(s.P50), ms(s.P99)
			}
			ri.Stages = append(ri.Stages, row)
		}
	}
	return ri
}

// seriesRate is a series' rate per second, "-" for setups (they have
// none: loadgen.IsSetupSeries).
func seriesRate(s loadgen.Series) string {
	if loadgen.IsSetupSeries(s.Name) {
		return "-"
	}
	return fmt.Sprintf("%.1f", s.Rate)
}

// loadStr describes a stage's load: "0→100/s", "50 sessions".
func loadStr(s loadgen.StageReport) string {
	unit := " sessions"
	if s.Rate {
		unit = "/s"
	}
	if s.From == s.Target {
		return fmt.Sprintf("%g%s", s.Target, unit)
	}
	return fmt.Sprintf("%g→%g%s", s.From, s.Target, unit)
}

// ms writes a latency with 3 significant digits.
func ms(d time.Duration) string { return loadgen.FormatLatency(d) }

// requestSeries returns the names of the request series of rep (setups
// left out), busiest first, at most n.
func requestSeries(rep *loadgen.Report, n int) []string {
	var ss []loadgen.Series
	for _, s := range rep.Series {
		if !loadgen.IsSetupSeries(s.Name) && s.Count > 0 {
			ss = append(ss, s)
		}
	}
	sort.SliceStable(ss, func(i, j int) bool { return ss[i].Count > ss[j].Count })
	var out []string
	for _, s := range ss[:min(n, len(ss))] {
		out = append(out, s.Name)
	}
	return out
}

// busiest names the request series of rep with the most answers.
func busiest(rep *loadgen.Report) string {
	if s := requestSeries(rep, 1); len(s) > 0 {
		return s[0]
	}
	return ""
}

// single fills the page of one run.
func (p *page) single(rep *loadgen.Report) error {
	total := rep.Duration.Seconds()
	xa := axis{lo: 0, hi: math.Max(total, 1e-3)}
	xt := timeTicks(xa.hi)
	names := requestSeries(rep, maxTimeSeries)
	for i, name := range names {
		var p50, p90, p99, mx series
		p50 = series{name: "p50"}
		p90 = series{name: "p90"}
		p99 = series{name: "p99"}
		mx = series{name: "max", color: "#9ca3af", dashed: true}
		for _, in := range rep.Intervals {
			for _, s := range in.Series {
				if s.Name == name && s.Count > 0 {
					x := (in.Offset + in.Duration/2).Seconds()
					p50.pts = append(p50.pts, point{x, msf(s.P50)})
					p90.pts = append(p90.pts, point{x, msf(s.P90)})
					p99.pts = append(p99.pts, point{x, msf(s.P99)})
					mx.pts = append(mx.pts, point{x, msf(s.Max)})
				}
			}
		}
		c := newChart(fmt.Sprintf("latency-%d", i), "Latency over time: "+name, "time", "latency",
			[]series{p50, p90, p99, mx}, xa, secLabel, msLabel, xt)
		p.marks(c, xa, rep)
		p.Charts = append(p.Charts, c)
	}
	thr := series{name: "ok/s"}
	errs := series{name: "not ok/s", color: "#dc2626"}
	for _, in := range rep.Intervals {
		d := in.Duration.Seconds()
		if d <= 0 {
			continue
		}
		x := (in.Offset + in.Duration/2).Seconds()
		thr.pts = append(thr.pts, point{x, float64(in.OK) / d})
		errs.pts = append(errs.pts, point{x, float64(in.Errors) / d})
	}
	c := newChart("throughput", "Throughput (ok/s) and requests not ok over time", "time", "per second", []series{thr, errs}, xa, secLabel, rateLabel, xt)
	p.marks(c, xa, rep)
	p.Charts = append(p.Charts, c)
	dist, err := distChart("distribution", "Latency by percentile (HdrHistogram scale)", distSeries(rep, "", ""))
	if err != nil {
		return err
	}
	p.Charts = append(p.Charts, dist)
	if cr := rep.Capacity; cr != nil {
		p.Capacity = cr
		for _, s := range cr.Steps {
			row := stepRow{Rate: fmt.Sprintf("%.4g/s", s.Rate), Series: s.Series, Requests: fmt.Sprint(s.Requests),
				P50: ms(s.P50), P99: ms(s.P99), Errors: fmt.Sprintf("%.2f%%", 100*s.Errors), Verdict: s.Verdict(), Held: s.Held}
			p.Steps = append(p.Steps, row)
		}
	}
	return nil
}

// marks marks the stages, or the capacity-search steps, on a time chart.
func (p *page) marks(c *svgChart, xa axis, rep *loadgen.Report) {
	for _, st := range rep.Stages {
		label := fmt.Sprintf("stage %d: %s", st.Stage, loadStr(st))
		if rep.Capacity != nil {
			label = fmt.Sprintf("step %d: %.4g/s", st.Stage, st.Target)
		}
		c.mark(xa, st.Offset.Seconds(), label)
	}
}

func msf(d time.Duration) float64 { return float64(d) / 1e6 }

// distSeries returns the percentile distribution of each series of rep
// (setups included), named with suffix and coloured color ("" for the
// palette).
func distSeries(rep *loadgen.Report, suffix, color string) []distLine {
	var out []distLine
	for i := range rep.Series {
		s := &rep.Series[i]
		if s.Count == 0 {
			continue
		}
		out = append(out, distLine{name: s.Name + suffix, color: color, s: s})
	}
	return out
}

// distLine is one series to draw on the percentile chart.
type distLine struct {
	name, color string
	dashed      bool
	s           *loadgen.Series
}

// distChart draws the percentile distributions as the HdrHistogram
// plotter does: x is log10(1/(1-q)), so 90 %, 99 %, 99.9 % are evenly
// spaced; y the latency.
func distChart(id, title string, lines []distLine) (*svgChart, error) {
	var ss []series
	xmax := 1.0
	for _, l := range lines {
		h, err := l.s.Hist()
		if err != nil {
			return nil, fmt.Errorf("loadreport: %w", err)
		}
		pts := percentilePoints(h)
		if len(pts) > 0 {
			xmax = math.Max(xmax, pts[len(pts)-1].x)
		}
		ss = append(ss, series{name: l.name, color: l.color, dashed: l.dashed, pts: pts})
	}
	xmax = math.Ceil(xmax)
	var xt []float64
	for v := 0.0; v <= xmax; v++ {
		xt = append(xt, v)
	}
	return newChart(id, title, "percentile", "latency", ss, axis{lo: 0, hi: xmax}, pctLabel, msLabel, xt), nil
}

// percentilePoints samples h's distribution: 10 points per decade of
// 1/(1-q), up to the percentile its count resolves, then its maximum.
func percentilePoints(h *hdrhistogram.Histogram) []point {
	n := h.TotalCount()
	if n == 0 {
		return nil
	}
	top := math.Log10(float64(n)) // beyond 1/(1-q) = n the count says nothing
	var out []point
	for x := 0.0; x < top; x += 0.1 {
		q := 1 - math.Pow(10, -x)
		out = append(out, point{x, msf(time.Duration(h.ValueAtPercentile(100 * q)))})
	}
	return append(out, point{math.Max(top, 0.1), msf(time.Duration(h.Max()))})
}
