package analysis

import (
	"cmp"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/mcptape/mcptape/internal/english"
)

// The page is one html/template (report.html.tmpl): every value from the
// tape is escaped by its context (text, attribute, URL), so a tool result
// holding markup stays text. The SVG charts come from report_svg.go,
// which escapes the text it draws, and enter as template.HTML.

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

//go:embed report.html.tmpl
var reportTemplateText string

// reportTemplate is the page; parsed once.
var reportTemplate = template.Must(template.New("report").Parse(reportTemplateText))

// htmlPage is what the template renders.
type htmlPage struct {
	Title, Tool, Version string
	CSS                  template.CSS
	Summary              []string // the lines under the title
	Warning              string
	Problems             []htmlSevRow
	ProblemsMore         int
	Sessions             htmlTable
	SessionsFolded       int
	Timeline             *htmlTimeline
	Latency, Tools       htmlTable
	MethodCards          []htmlCard
	ToolCards            []htmlCard
	Errors               htmlTable
	Streams              *htmlStreams
	Violations           []htmlSevRow
	ViolationsMore       int
}

// htmlTable is a table with at most maxTableRows rows; More counts the
// rows left out.
type htmlTable struct {
	Head []string
	Rows [][]htmlCell
	More int
}

// htmlCell is one table cell; numbers (and empty cells) align right.
type htmlCell struct {
	Text string
	Num  bool
}

// htmlSevRow is a row of the problems or violations table.
type htmlSevRow struct {
	Severity, Name, Count, Text string
	Details                     []string // problems: detail lines
	First                       string   // violations: the first example
}

// htmlTimeline is the timeline section.
type htmlTimeline struct {
	Legend, Chart   template.HTML
	Drawn, Omitted  string
	Lanes, Sessions string
}

// htmlCard is one latency chart.
type htmlCard struct {
	Label, Count, Errors, P50, P99, Max string
	Chart                               template.HTML
}

// cells makes a table row; a cell that parses as a number, or is empty,
// aligns right.
func cells(texts ...string) []htmlCell {
	row := make([]htmlCell, len(texts))
	for i, c := range texts {
		_, err := strconv.ParseFloat(c, 64)
		row[i] = htmlCell{Text: c, Num: err == nil || c == ""}
	}
	return row
}

// limitRows returns the first maxTableRows of n rows and how many are left.
func limitRows(n int) (shown, more int) {
	shown = min(n, maxTableRows)
	return shown, n - shown
}

func reportInt(n int64) string { return strconv.FormatInt(n, 10) }

// writeHTML writes the whole report.
func writeHTML(w io.Writer, o *htmlOptions, rep *Report, c *chartData) error {
	t := &rep.Tape
	page := &htmlPage{Title: o.title, Tool: t.Tool, Version: t.Version, CSS: template.CSS(reportCSS), Warning: t.Warning}
	start := time.Unix(0, t.FirstNS).UTC().Format("2006-01-02 15:04:05.000 UTC")
	page.Summary = []string{
		fmt.Sprintf("%s tape%s, recorded %s for %s.", t.Transport, targetText(t.Target), start, fmtDur(t.DurationNS)),
		fmt.Sprintf("%s: %s, %s; %s.", english.Count(t.Records, "record"), english.Count(t.Messages, "message"), english.Count(t.Events, "event"),
			english.Count(len(rep.Sessions)+rep.SessionsFolded, "session")),
	}
	n, more := limitRows(len(rep.Problems))
	page.ProblemsMore = more
	for _, p := range rep.Problems[:n] {
		r := htmlSevRow{Severity: p.Severity.String(), Name: p.What, Count: reportInt(p.Count), Text: p.Summary}
		for _, d := range p.Details[:min(len(p.Details), 3)] {
			r.Details = append(r.Details, clip(d, 160))
		}
		page.Problems = append(page.Problems, r)
	}
	sessionsTable(page, rep)
	page.Timeline = timelineSection(c)
	latencySection(page, o, rep, c)
	errorsSection(page, rep)
	page.Streams = streamsSection(rep.Streams)
	if err := reportTemplate.Execute(w, page); err != nil {
		return fmt.Errorf("analysis: report: %w", err)
	}
	return nil
}

func targetText(target string) string {
	if target == "" {
		return ""
	}
	return " of " + target
}

// peerCell is peerText for a table cell: empty when the peer is unknown.
func peerCell(p *Peer) string {
	if p == nil {
		return ""
	}
	return peerText(p)
}

// sessionsTable lists the sessions; the refused and broken off columns
// are there only when some session has such requests, as inspect's JSON
// has those counts only when they are not zero.
func sessionsTable(page *htmlPage, rep *Report) {
	tb := &page.Sessions
	n, more := limitRows(len(rep.Sessions))
	tb.More = more
	var refused, broken bool
	for _, s := range rep.Sessions[:n] {
		refused, broken = refused || s.Refused != 0, broken || s.BrokenOff != 0
	}
	tb.Head = []string{"session", "client", "server", "protocol", "start", "duration", "messages", "errors", "unanswered"}
	if refused {
		tb.Head = append(tb.Head, "refused")
	}
	if broken {
		tb.Head = append(tb.Head, "broken off")
	}
	tb.Head = append(tb.Head, "violations")
	for _, s := range rep.Sessions[:n] {
		id := s.ID
		if id == "" {
			id = "(no session)"
		}
		row := []string{clip(id, 40), peerCell(s.Client), peerCell(s.Server), s.ProtocolVersion, offset(s.FirstNS - rep.Tape.OriginNS),
			fmtDur(s.DurationNS), reportInt(s.Messages), reportInt(s.Errors), reportInt(s.Unanswered)}
		if refused {
			row = append(row, reportInt(s.Refused))
		}
		if broken {
			row = append(row, reportInt(s.BrokenOff))
		}
		tb.Rows = append(tb.Rows, cells(append(row, reportInt(s.Violations))...))
	}
	page.SessionsFolded = rep.SessionsFolded
}

func timelineSection(c *chartData) *htmlTimeline {
	if len(c.spans) == 0 {
		return nil
	}
	chart, _ := timelineSVG(c)
	tl := &htmlTimeline{Legend: template.HTML(legendSVG()), Chart: template.HTML(chart)} // #nosec: the SVG renderer escapes its text
	if c.omitted > 0 {
		tl.Drawn, tl.Omitted = strconv.Itoa(len(c.spans)), reportInt(c.omitted)
	}
	if len(c.sessions) > tlMaxLanes {
		tl.Lanes, tl.Sessions = strconv.Itoa(tlMaxLanes), strconv.Itoa(len(c.sessions))
	}
	return tl
}

func latencySection(page *htmlPage, o *htmlOptions, rep *Report, c *chartData) {
	lo, hi := histRange(c.methods, c.tools)
	page.Latency.Head = []string{"dir", "method", "count", "errors", "mean", "p50", "p90", "p99", "max"}
	n, more := limitRows(len(rep.Latency))
	page.Latency.More = more
	for _, l := range rep.Latency[:n] {
		page.Latency.Rows = append(page.Latency.Rows, cells(l.Dir, l.Method, reportInt(l.Count), reportInt(l.Errors),
			fmtDur(l.MeanNS), fmtDur(l.P50NS), fmtDur(l.P90NS), fmtDur(l.P99NS), fmtDur(l.MaxNS)))
	}
	byCount := slices.Clone(rep.Latency)
	slices.SortStableFunc(byCount, func(a, b LatencyStats) int { return cmp.Compare(b.Count, a.Count) })
	for _, l := range byCount[:min(len(byCount), o.maxCharts)] {
		if hist := c.methods[l.Dir+" "+l.Method]; hist != nil {
			page.MethodCards = append(page.MethodCards, latencyCard(l.Dir+" "+l.Method, l.Latency, english.Count(l.Errors, "error"), hist, lo, hi))
		}
	}
	page.Tools.Head = []string{"tool", "calls", "errors", "tool errors", "mean", "p50", "p90", "p99", "max"}
	n, more = limitRows(len(rep.Tools))
	page.Tools.More = more
	for _, t := range rep.Tools[:n] {
		page.Tools.Rows = append(page.Tools.Rows, cells(t.Name, reportInt(t.Calls), reportInt(t.Errors), reportInt(t.ToolErrors),
			fmtDur(t.MeanNS), fmtDur(t.P50NS), fmtDur(t.P90NS), fmtDur(t.P99NS), fmtDur(t.MaxNS)))
	}
	byTool := slices.Clone(rep.Tools)
	slices.SortStableFunc(byTool, func(a, b ToolStats) int { return cmp.Compare(b.Calls, a.Calls) })
	for _, t := range byTool[:min(len(byTool), o.maxCharts)] {
		if hist := c.tools[t.Name]; hist != nil {
			errs := english.Count(t.Errors, "error")
			if t.ToolErrors > 0 { // apart, as in the table (and the method's card counts only the first)
				errs += ", " + english.Count(t.ToolErrors, "tool error")
			}
			page.ToolCards = append(page.ToolCards, latencyCard(t.Name, t.Latency, errs, hist, lo, hi))
		}
	}
}

// latencyCard is one latency chart with its heading; errs says how many
// of its requests failed.
func latencyCard(label string, lat Latency, errs string, hist *latHist, lo, hi int) htmlCard {
	return htmlCard{Label: label, Count: english.Count(lat.Count, "request"), Errors: errs, P50: fmtDur(lat.P50NS),
		P99: fmtDur(lat.P99NS), Max: fmtDur(lat.MaxNS),
		Chart: template.HTML(histogramSVG(hist, lat, lo, hi, label))} // #nosec: the SVG renderer escapes its text
}

func errorsSection(page *htmlPage, rep *Report) {
	page.Errors.Head = []string{"code", "message", "count", "first method"}
	n, more := limitRows(len(rep.Errors))
	page.Errors.More = more
	for _, e := range rep.Errors[:n] {
		page.Errors.Rows = append(page.Errors.Rows, cells(reportInt(e.Code), clip(e.Message, 120), reportInt(e.Count), e.Method))
	}
	n, page.ViolationsMore = limitRows(len(rep.Violations))
	for _, v := range rep.Violations[:n] {
		first := ""
		if len(v.Examples) > 0 {
			e := v.Examples[0]
			first = fmt.Sprintf("record %d at %s: %s", e.Seq, offset(e.OffsetNS), clip(e.Detail, 100))
		}
		page.Violations = append(page.Violations, htmlSevRow{Severity: v.Severity.String(), Name: v.Rule,
			Count: reportInt(v.Count), Text: v.Text, First: first})
	}
}
