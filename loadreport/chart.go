package loadreport

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/mcptape/mcptape/internal/chart"
)

// Chart geometry, in pixels.
const (
	chartW     = 1100
	chartH     = 300
	chartLeft  = 70
	chartRight = 20
	chartTop   = 16
	chartBot   = 40
)

// palette colours the lines of a chart, in order.
var palette = []string{"#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#ca8a04", "#db2777"}

// svgChart is one line chart, ready for the page template: every number
// placed, every label a plain string (the template escapes them).
type svgChart struct {
	ID, Title, Label string // Label: the aria-label
	W, H             int
	PlotX, PlotY     float64
	PlotW, PlotH     float64
	XTicks, YTicks   []tick
	XName, YName     string
	Lines            []line
	Marks            []vmark
	Empty            string // shown instead of lines when there is no data
}

type tick struct {
	Pos   float64
	Label string
}

// line is one polyline; Points is "x,y x,y ...".
type line struct {
	Name, Color, Points string
	Dashed              bool
}

// vmark is a vertical marker: a stage or capacity-search step start.
type vmark struct {
	X     float64
	Label string
}

// point is one data point of a line before placement.
type point struct{ x, y float64 }

// series is one line's data.
type series struct {
	name   string
	color  string
	dashed bool
	pts    []point
}

// axis maps data values onto pixels; log axes take log10 of the values.
type axis struct {
	lo, hi float64
	log    bool
}

func (a axis) frac(v float64) float64 {
	if a.log {
		v = math.Log10(math.Max(v, 1e-12))
	}
	if a.hi <= a.lo {
		return 0
	}
	return (v - a.lo) / (a.hi - a.lo)
}

// newChart places lines on a chart with a linear x axis (xLabel formats
// its ticks) and a linear y axis from 0 (yLabel formats its ticks).
func newChart(id, title, xName, yName string, ss []series, xAxis axis, xLabel, yLabel func(float64) string, xTicks []float64) *svgChart {
	c := &svgChart{ID: id, Title: title, Label: title, W: chartW, H: chartH, PlotX: chartLeft, PlotY: chartTop,
		PlotW: chartW - chartLeft - chartRight, PlotH: chartH - chartTop - chartBot, XName: xName, YName: yName}
	ymax := 0.0
	n := 0
	for _, s := range ss {
		for _, p := range s.pts {
			ymax = math.Max(ymax, p.y)
			n++
		}
	}
	if n == 0 {
		c.Empty = "no data"
		return c
	}
	if ymax <= 0 {
		ymax = 1
	}
	step := chart.NiceStep(ymax, 5)
	ymax = math.Ceil(ymax/step) * step
	yAxis := axis{lo: 0, hi: ymax}
	for v := 0.0; v <= ymax+step/2; v += step {
		c.YTicks = append(c.YTicks, tick{Pos: c.y(yAxis, v), Label: yLabel(v)})
	}
	for _, v := range xTicks {
		c.XTicks = append(c.XTicks, tick{Pos: c.x(xAxis, v), Label: xLabel(v)})
	}
	for i, s := range ss {
		var b strings.Builder
		for _, p := range s.pts {
			fmt.Fprintf(&b, "%.1f,%.1f ", c.x(xAxis, p.x), c.y(yAxis, p.y))
		}
		color := s.color
		if color == "" {
			color = palette[i%len(palette)]
		}
		c.Lines = append(c.Lines, line{Name: s.name, Color: color, Points: strings.TrimSpace(b.String()), Dashed: s.dashed})
	}
	return c
}

func (c *svgChart) x(a axis, v float64) float64 { return c.PlotX + a.frac(v)*c.PlotW }
func (c *svgChart) y(a axis, v float64) float64 { return c.PlotY + c.PlotH - a.frac(v)*c.PlotH }

// mark adds a vertical marker at data x on axis a.
func (c *svgChart) mark(a axis, v float64, label string) {
	if c.Empty == "" {
		c.Marks = append(c.Marks, vmark{X: c.x(a, v), Label: label})
	}
}

// timeTicks returns round tick values over [0, total] seconds.
func timeTicks(total float64) []float64 {
	step := chart.NiceStep(total, 10)
	var out []float64
	for v := 0.0; v <= total+step/1e6; v += step {
		out = append(out, v)
	}
	return out
}

// secLabel writes seconds from the start: "0s", "30s", "2m0s".
func secLabel(v float64) string {
	d := time.Duration(v * float64(time.Second))
	if d >= time.Minute {
		return d.Round(time.Second).String()
	}
	return strconv.FormatFloat(v, 'f', -1, 64) + "s"
}

// msLabel writes a latency in milliseconds.
func msLabel(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) + " ms" }

// rateLabel writes a rate per second.
func rateLabel(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) + "/s" }

// pctLabel writes a percentile from its x, log10(1/(1-q)): 0 → "0%", 1
// → "90%", 2 → "99%"...
func pctLabel(x float64) string {
	q := 1 - math.Pow(10, -x)
	return strconv.FormatFloat(100*q, 'f', -1, 64) + "%"
}
