package analysis

import (
	"fmt"
	"html"
	"math"
	"slices"
	"strings"

	"github.com/mcptape/mcptape/internal/chart"
	"github.com/mcptape/mcptape/internal/english"
)

// svgDoc is a tiny SVG writer: rectangles, lines and text, every string
// escaped. Coordinates are in pixels.
type svgDoc struct {
	b strings.Builder
}

func newSVG(w, h int, label string) *svgDoc {
	s := &svgDoc{}
	fmt.Fprintf(&s.b, `<svg width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s">`,
		w, h, w, h, html.EscapeString(label))
	return s
}

// rect draws a filled rectangle with an optional tooltip.
func (s *svgDoc) rect(x, y, w, h float64, fill, title string) {
	fmt.Fprintf(&s.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s">`, x, y, w, h, fill)
	if title != "" {
		fmt.Fprintf(&s.b, `<title>%s</title>`, html.EscapeString(title))
	}
	s.b.WriteString(`</rect>`)
}

// line draws a line; dashed lines are for grids.
func (s *svgDoc) line(x1, y1, x2, y2 float64, stroke string, dashed bool) {
	dash := ""
	if dashed {
		dash = ` stroke-dasharray="3 3"`
	}
	fmt.Fprintf(&s.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"%s/>`, x1, y1, x2, y2, stroke, dash)
}

// text writes a label; anchor is start, middle or end.
func (s *svgDoc) text(x, y float64, anchor, class, str string) {
	fmt.Fprintf(&s.b, `<text x="%.1f" y="%.1f" text-anchor="%s" class="%s">%s</text>`, x, y, anchor, class, html.EscapeString(str))
}

func (s *svgDoc) String() string { return s.b.String() + `</svg>` }

// The timeline's colours, one per outcome shown in the legend, in its
// order; an outcome not in the list (abandoned, unfinished) has the
// colour of never answered.
var legendOutcomes = []struct{ outcome, color string }{
	{OutcomeOK, "#2563eb"}, {OutcomeError, "#dc2626"}, {OutcomeToolError, "#f59e0b"}, {OutcomeRefused, "#be185d"},
	{OutcomeBrokenOff, "#7c2d12"}, {OutcomeUnanswered, "#6b7280"}, {OutcomeCancelled, "#d1d5db"}, {OutcomeCutByShutdown, "#a78bfa"}, {OutcomeClientGone, "#c4b5fd"}, {OutcomeLostInGap, "#fde68a"},
}

// outcomeColor is the timeline's colour of an outcome.
func outcomeColor(outcome string) string {
	for _, l := range legendOutcomes {
		if l.outcome == outcome {
			return l.color
		}
	}
	return outcomeColor(OutcomeUnanswered)
}

// Timeline geometry.
const (
	tlWidth     = 1180
	tlLabel     = 170
	tlSubRow    = 7
	tlMaxSub    = 4
	tlMaxLanes  = 40
	tlAxis      = 22
	tlLanePad   = 6
	histWidth   = 520
	histHeight  = 74
	histPadLeft = 8
)

// timelineSVG draws one lane per session with its requests as bars from
// request to response, concurrent requests on sub-rows.
func timelineSVG(c *chartData) (string, int) {
	lanes := min(len(c.sessions), tlMaxLanes)
	// Greedy sub-rows per lane: a request goes on the first sub-row free
	// at its start.
	rowEnd := make([][]int64, lanes)
	rowOf := make([]int, len(c.spans))
	for i, sp := range c.spans {
		if sp.session >= lanes {
			rowOf[i] = -1
			continue
		}
		rows := rowEnd[sp.session]
		r := slices.IndexFunc(rows, func(end int64) bool { return end < sp.start })
		switch {
		case r >= 0:
		case len(rows) < tlMaxSub:
			r = len(rows)
			rows = append(rows, 0)
		default:
			r = tlMaxSub - 1
		}
		rows[r] = max(rows[r], sp.end)
		rowEnd[sp.session] = rows
		rowOf[i] = r
	}
	laneY := make([]float64, lanes+1)
	y := 4.0
	for l := 0; l < lanes; l++ {
		laneY[l] = y
		y += float64(max(len(rowEnd[l]), 1)*tlSubRow + tlLanePad*2)
	}
	laneY[lanes] = y
	height := int(y) + tlAxis
	s := newSVG(tlWidth, height, "timeline of requests per session")
	plotW := float64(tlWidth - tlLabel - 40)
	total := float64(max(c.last, 1))
	xOf := func(t int64) float64 { return float64(tlLabel) + float64(t)/total*plotW }
	for l := 0; l < lanes; l++ {
		if l%2 == 1 {
			s.rect(float64(tlLabel), laneY[l], plotW, laneY[l+1]-laneY[l], "#f3f4f6", "")
		}
		name := c.sessions[l]
		if name == "" {
			name = "(no session)"
		}
		s.text(float64(tlLabel-8), (laneY[l]+laneY[l+1])/2+4, "end", "lbl", clip(name, 21))
	}
	step := chart.NiceStep(total, 10)
	for t := 0.0; t <= total; t += step {
		x := xOf(int64(t))
		s.line(x, 0, x, y, "#d1d5db", true)
		anchor := "middle"
		if t == 0 {
			anchor = "start"
		}
		s.text(x, y+15, anchor, "axis", fmtDur(int64(t)))
	}
	for i, sp := range c.spans {
		if rowOf[i] < 0 {
			continue
		}
		x := xOf(sp.start)
		w := max(xOf(sp.end)-x, 2)
		label := sp.method
		if sp.name != "" {
			label += " " + sp.name
		}
		title := fmt.Sprintf("%s: %s at %s, %s", label, describeOutcome(sp.outcome).text, offset(sp.start), fmtDur(sp.end-sp.start))
		if !sp.answered {
			title = fmt.Sprintf("%s at %s: %s", label, offset(sp.start), describeOutcome(sp.outcome).text)
		}
		s.rect(x, laneY[sp.session]+tlLanePad+float64(rowOf[i]*tlSubRow), w, tlSubRow-1.5, outcomeColor(sp.outcome), title)
	}
	return s.String(), height
}

// histRange is the tlSpan of buckets the latency charts show, shared so
// that they can be compared at a glance.
func histRange(hs ...map[string]*latHist) (lo, hi int) {
	lo, hi = histBuckets, -1
	for _, m := range hs {
		for _, h := range m {
			for b, n := range h.counts {
				if n > 0 {
					lo, hi = min(lo, b), max(hi, b)
				}
			}
		}
	}
	if hi < 0 {
		return 0, histPerDecade * 3
	}
	// Whole decades, at least two.
	lo = lo / histPerDecade * histPerDecade
	hi = (hi/histPerDecade + 1) * histPerDecade
	if hi-lo < 2*histPerDecade {
		hi = lo + 2*histPerDecade
	}
	return lo, min(hi, histBuckets)
}

// histogramSVG draws a latency histogram over buckets [lo, hi) with the
// percentiles of lat marked.
func histogramSVG(h *latHist, lat Latency, lo, hi int, label string) string {
	s := newSVG(histWidth, histHeight, "latency distribution of "+label)
	plotH := float64(histHeight - 20)
	n := hi - lo
	bw := float64(histWidth-2*histPadLeft) / float64(n)
	var peak int64 = 1
	for b := lo; b < hi; b++ {
		peak = max(peak, h.counts[b])
	}
	s.line(histPadLeft, plotH, float64(histWidth-histPadLeft), plotH, "#6b7280", false)
	for b := lo; b < hi; b++ {
		x := histPadLeft + float64(b-lo)*bw
		if (b-lo)%histPerDecade == 0 {
			s.line(x, 0, x, plotH, "#e5e7eb", true)
			anchor := "middle"
			if b == lo {
				anchor = "start"
			}
			s.text(x, plotH+14, anchor, "axis", fmtDur(int64(bucketEdge(b))))
		}
		if c := h.counts[b]; c > 0 {
			bh := math.Max(float64(c)/float64(peak)*(plotH-6), 1.5)
			s.rect(x+1, plotH-bh, bw-2, bh, "#2563eb",
				fmt.Sprintf("%s from %s to %s", english.Count(c, "request"), fmtDur(int64(bucketEdge(b))), fmtDur(int64(bucketEdge(b+1)))))
		}
	}
	// Percentile markers, placed on the same log scale.
	xOf := func(ns int64) float64 {
		pos := math.Log10(math.Max(float64(ns), 1)/histMinNS)*histPerDecade - float64(lo)
		return histPadLeft + math.Min(math.Max(pos, 0), float64(n))*bw
	}
	for _, m := range []struct {
		name  string
		ns    int64
		color string
		y     float64
	}{{"p50", lat.P50NS, "#059669", 11}, {"p99", lat.P99NS, "#dc2626", 23}} {
		if lat.Count == 0 {
			break
		}
		x := xOf(m.ns)
		s.line(x, 2, x, plotH, m.color, false)
		anchor, dx := "start", 3.0
		if x > histWidth-40 {
			anchor, dx = "end", -3
		}
		s.text(x+dx, m.y, anchor, "mark", m.name)
	}
	return s.String()
}

// legendSVG draws the colour legend of the timeline.
func legendSVG() string {
	s := newSVG(tlWidth, 18, "legend")
	x := 0.0
	for _, l := range legendOutcomes {
		name := describeOutcome(l.outcome).text
		s.rect(x, 4, 12, 10, l.color, "")
		s.text(x+16, 13, "start", "lbl", name)
		x += 24 + float64(len(name))*6.5
	}
	return s.String()
}
