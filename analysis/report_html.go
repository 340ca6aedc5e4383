package analysis

import (
	"bufio"
	"cmp"
	"fmt"
	"html"
	"io"
	"slices"
	"strconv"
	"time"
)

// maxTableRows bounds the rows of each table of the HTML report.
const maxTableRows = 200

// reportCSS styles the report; no font or image is fetched.
const reportCSS = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:#111827;background:#fff;margin:24px 32px;max-width:1240px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #e5e7eb;padding-bottom:4px}
.meta{color:#4b5563;margin:2px 0}.warn{background:#fef3c7;border:1px solid #f59e0b;padding:6px 10px;margin:10px 0;border-radius:4px}
table{border-collapse:collapse;margin:6px 0;font-size:13px}th,td{padding:3px 10px;border-bottom:1px solid #e5e7eb;text-align:left;vertical-align:top}
th{background:#f9fafb;font-weight:600}td.n{text-align:right;font-variant-numeric:tabular-nums}
.sev{display:inline-block;min-width:56px;text-align:center;border-radius:3px;padding:0 6px;font-size:12px;color:#fff}
.sev-error{background:#dc2626}.sev-warning{background:#d97706}.sev-info{background:#6b7280}
.cards{display:flex;flex-wrap:wrap;gap:12px}.card{border:1px solid #e5e7eb;border-radius:6px;padding:8px 10px}
.card h3{font-size:13px;margin:0 0 2px;font-family:ui-monospace,Menlo,Consolas,monospace}.card .meta{font-size:12px}
.lbl{font-size:12px;fill:#374151}.axis{font-size:11px;fill:#6b7280}.mark{font-size:11px;font-weight:600;fill:#111827}
.ok{color:#059669}code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
footer{margin-top:32px;color:#6b7280;font-size:12px}
`

// htmlWriter writes the report, remembering the first write error.
type htmlWriter struct {
	w   *bufio.Writer
	err error
}

func (h *htmlWriter) raw(s string) {
	if h.err == nil {
		_, h.err = h.w.WriteString(s)
	}
}

// f writes a format whose string arguments are escaped.
func (h *htmlWriter) f(format string, a ...any) {
	for i, v := range a {
		if s, ok := v.(string); ok {
			a[i] = html.EscapeString(s)
		}
	}
	h.raw(fmt.Sprintf(format, a...))
}

// row writes a table row; cells that are numbers are right-aligned.
func (h *htmlWriter) row(cells ...string) {
	h.raw("<tr>")
	for _, c := range cells {
		if _, err := strconv.ParseFloat(c, 64); err == nil || c == "" {
			h.f(`<td class="n">%s</td>`, c)
		} else {
			h.f(`<td>%s</td>`, c)
		}
	}
	h.raw("</tr>\n")
}

func (h *htmlWriter) head(cells ...string) {
	h.raw("<table><tr>")
	for _, c := range cells {
		h.f("<th>%s</th>", c)
	}
	h.raw("</tr>\n")
}

func (h *htmlWriter) more(shown, total int) {
	h.raw("</table>\n")
	if total > shown {
		h.f(`<p class="meta">%s more not shown (mcptape inspect --format json lists them).</p>`, strconv.Itoa(total-shown))
	}
}

func reportInt(n int64) string { return strconv.FormatInt(n, 10) }

// writeHTML writes the whole report.
func writeHTML(w io.Writer, o *htmlOptions, rep *Report, c *chartData) error {
	h := &htmlWriter{w: bufio.NewWriter(w)}
	h.f("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>mcptape report: %s</title>\n", o.title)
	h.raw("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<style>" + reportCSS + "</style></head><body>\n")
	writeSummary(h, o, rep)
	writeProblems(h, rep)
	writeSessions(h, rep)
	writeTimeline(h, c)
	writeLatency(h, o, rep, c)
	writeErrors(h, rep)
	h.f("<footer>Made by mcptape report from a tape written by %s %s. This file is self-contained: it needs no network.</footer>\n</body></html>\n",
		rep.Tape.Tool, rep.Tape.Version)
	if h.err != nil {
		return h.err
	}
	return h.w.Flush()
}

func writeSummary(h *htmlWriter, o *htmlOptions, rep *Report) {
	t := &rep.Tape
	h.f("<h1>mcptape report: %s</h1>\n", o.title)
	start := time.Unix(0, t.FirstNS).UTC().Format("2006-01-02 15:04:05.000 UTC")
	h.f(`<p class="meta">%s tape%s, recorded %s for %s.</p>`+"\n", t.Transport, targetText(t.Target), start, fmtDur(t.DurationNS))
	h.f(`<p class="meta">%s records: %s messages, %s events; %s sessions.</p>`+"\n",
		reportInt(t.Records), reportInt(t.Messages), reportInt(t.Events), strconv.Itoa(len(rep.Sessions)+rep.SessionsFolded))
	if t.Warning != "" {
		h.f(`<p class="warn">Damaged tape: %s. Everything below covers the records before the damage.</p>`+"\n", t.Warning)
	}
}

func targetText(target string) string {
	if target == "" {
		return ""
	}
	return " of " + target
}

func writeProblems(h *htmlWriter, rep *Report) {
	h.raw("<h2>Problems</h2>\n")
	if len(rep.Problems) == 0 {
		h.raw(`<p class="ok">No problems found.</p>` + "\n")
		return
	}
	h.head("severity", "what", "count", "summary")
	n := min(len(rep.Problems), maxTableRows)
	for _, p := range rep.Problems[:n] {
		sev := p.Severity.String()
		h.f(`<tr><td><tlSpan class="sev sev-%s">%s</tlSpan></td><td><code>%s</code></td><td class="n">%s</td><td>%s`,
			sev, sev, p.What, reportInt(p.Count), p.Summary)
		for _, d := range p.Details[:min(len(p.Details), 3)] {
			h.f(`<br><code>%s</code>`, clip(d, 160))
		}
		h.raw("</td></tr>\n")
	}
	h.more(n, len(rep.Problems))
}

// peerCell is peerText for a table cell: empty when the peer is unknown.
func peerCell(p *Peer) string {
	if p == nil {
		return ""
	}
	return peerText(p)
}

func writeSessions(h *htmlWriter, rep *Report) {
	h.raw("<h2>Sessions</h2>\n")
	if len(rep.Sessions) == 0 {
		h.raw("<p>No sessions.</p>\n")
		return
	}
	h.head("session", "client", "server", "protocol", "start", "duration", "messages", "errors", "unanswered", "violations")
	n := min(len(rep.Sessions), maxTableRows)
	for _, s := range rep.Sessions[:n] {
		id := s.ID
		if id == "" {
			id = "(no session)"
		}
		h.row(clip(id, 40), peerCell(s.Client), peerCell(s.Server), s.ProtocolVersion, offset(s.FirstNS-rep.Tape.OriginNS),
			fmtDur(s.DurationNS), reportInt(s.Messages), reportInt(s.Errors), reportInt(s.Unanswered), reportInt(s.Violations))
	}
	h.more(n, len(rep.Sessions))
	if rep.SessionsFolded > 0 {
		h.f(`<p class="meta">%s further sessions are counted in the totals only.</p>`, strconv.Itoa(rep.SessionsFolded))
	}
}

func writeTimeline(h *htmlWriter, c *chartData) {
	h.raw("<h2>Timeline of requests</h2>\n")
	if len(c.spans) == 0 {
		h.raw("<p>No requests.</p>\n")
		return
	}
	h.raw(`<p class="meta">One lane per session; each bar runs from a request to its response (hover for details).</p>` + "\n")
	h.raw(legendSVG() + "<br>\n")
	chart, _ := timelineSVG(c)
	h.raw(chart + "\n")
	if c.omitted > 0 {
		h.f(`<p class="meta">The first %s requests are drawn; %s later ones are left out.</p>`+"\n",
			strconv.Itoa(len(c.spans)), reportInt(c.omitted))
	}
	if len(c.sessions) > tlMaxLanes {
		h.f(`<p class="meta">The first %s sessions are drawn, out of %s.</p>`+"\n", strconv.Itoa(tlMaxLanes), strconv.Itoa(len(c.sessions)))
	}
}

func writeLatency(h *htmlWriter, o *htmlOptions, rep *Report, c *chartData) {
	lo, hi := histRange(c.methods, c.tools)
	h.raw("<h2>Latency by method</h2>\n")
	if len(rep.Latency) == 0 {
		h.raw("<p>No request was answered.</p>\n")
	} else {
		h.head("dir", "method", "count", "errors", "mean", "p50", "p90", "p99", "max")
		n := min(len(rep.Latency), maxTableRows)
		for _, l := range rep.Latency[:n] {
			h.row(l.Dir, l.Method, reportInt(l.Count), reportInt(l.Errors), fmtDur(l.MeanNS), fmtDur(l.P50NS), fmtDur(l.P90NS), fmtDur(l.P99NS), fmtDur(l.MaxNS))
		}
		h.more(n, len(rep.Latency))
		byCount := slices.Clone(rep.Latency)
		slices.SortStableFunc(byCount, func(a, b LatencyStats) int { return cmp.Compare(b.Count, a.Count) })
		h.raw(`<div class="cards">`)
		for _, l := range byCount[:min(len(byCount), o.maxCharts)] {
			if hist := c.methods[l.Dir+" "+l.Method]; hist != nil {
				latencyCard(h, l.Dir+" "+l.Method, l.Latency, l.Errors, hist, lo, hi)
			}
		}
		h.raw("</div>\n")
	}
	h.raw("<h2>Latency by tool</h2>\n")
	if len(rep.Tools) == 0 {
		h.raw("<p>No tool was called.</p>\n")
		return
	}
	h.head("tool", "calls", "errors", "tool errors", "mean", "p50", "p90", "p99", "max")
	n := min(len(rep.Tools), maxTableRows)
	for _, t := range rep.Tools[:n] {
		h.row(t.Name, reportInt(t.Calls), reportInt(t.Errors), reportInt(t.ToolErrors), fmtDur(t.MeanNS), fmtDur(t.P50NS), fmtDur(t.P90NS), fmtDur(t.P99NS), fmtDur(t.MaxNS))
	}
	h.more(n, len(rep.Tools))
	byCount := slices.Clone(rep.Tools)
	slices.SortStableFunc(byCount, func(a, b ToolStats) int { return cmp.Compare(b.Calls, a.Calls) })
	h.raw(`<div class="cards">`)
	for _, t := range byCount[:min(len(byCount), o.maxCharts)] {
		if hist := c.tools[t.Name]; hist != nil {
			latencyCard(h, t.Name, t.Latency, t.Errors+t.ToolErrors, hist, lo, hi)
		}
	}
	h.raw("</div>\n")
}

// card writes one latency chart with its heading.
func latencyCard(h *htmlWriter, label string, lat Latency, errs int64, hist *latHist, lo, hi int) {
	h.f(`<div class="card"><h3>%s</h3><p class="meta">%s requests, %s errors · p50 %s · p99 %s · max %s</p>`,
		label, reportInt(lat.Count), reportInt(errs), fmtDur(lat.P50NS), fmtDur(lat.P99NS), fmtDur(lat.MaxNS))
	h.raw(histogramSVG(hist, lat, lo, hi, label))
	h.raw("</div>")
}

func writeErrors(h *htmlWriter, rep *Report) {
	h.raw("<h2>Errors</h2>\n")
	if len(rep.Errors) == 0 {
		h.raw(`<p class="ok">No error responses.</p>` + "\n")
	} else {
		h.head("code", "message", "count", "first method")
		n := min(len(rep.Errors), maxTableRows)
		for _, e := range rep.Errors[:n] {
			h.row(reportInt(e.Code), clip(e.Message, 120), reportInt(e.Count), e.Method)
		}
		h.more(n, len(rep.Errors))
	}
	h.raw("<h2>Protocol violations</h2>\n")
	if len(rep.Violations) == 0 {
		h.raw(`<p class="ok">No protocol violations.</p>` + "\n")
		return
	}
	h.head("severity", "rule", "count", "what", "first seen")
	n := min(len(rep.Violations), maxTableRows)
	for _, v := range rep.Violations[:n] {
		first := ""
		if len(v.Examples) > 0 {
			e := v.Examples[0]
			first = fmt.Sprintf("record %d at %s: %s", e.Seq, offset(e.OffsetNS), clip(e.Detail, 100))
		}
		sev := v.Severity.String()
		h.f(`<tr><td><tlSpan class="sev sev-%s">%s</tlSpan></td><td><code>%s</code></td><td class="n">%s</td><td>%s</td><td>%s</td></tr>`+"\n",
			sev, sev, v.Rule, reportInt(v.Count), v.Text, first)
	}
	h.more(n, len(rep.Violations))
}
