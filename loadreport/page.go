package loadreport

import "html/template"

// pageTmpl is the page: inline CSS and SVG, no script, nothing fetched.
// html/template escapes every string drawn from a report.
var pageTmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"add": func(a, b float64) float64 { return a + b },
	"div": func(a, b float64) float64 { return a / b },
	"inc": func(i int) int { return i + 1 },
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#111827;background:#fff}
h1{font-size:22px;margin:0 0 12px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #e5e7eb;padding-bottom:4px}
table{border-collapse:collapse;margin:6px 0 12px}td,th{padding:3px 10px;border-bottom:1px solid #e5e7eb;text-align:right}
th{background:#f3f4f6}td.l,th.l{text-align:left}.worse{color:#b91c1c;font-weight:600}.better{color:#15803d}
.held{color:#15803d}.broke{color:#b91c1c}.swatch{display:inline-block;width:12px;height:12px;margin-right:6px;vertical-align:middle}
svg text{font:11px system-ui,sans-serif;fill:#374151}svg .ttl{font-size:13px;font-weight:600;fill:#111827}
.legend span{margin-right:16px}.big{font-size:18px;font-weight:600}
</style></head><body>
<h1>{{.Title}}</h1>
{{if .Compare}}<p class="legend">{{range .Runs}}<span><i class="swatch" style="background:{{.Color}}"></i>{{.Name}}</span>{{end}}</p>{{end}}
{{with .Capacity}}<h2>Capacity</h2>
<p class="big">{{if .Found}}{{printf "%.4g" .Rate}}/s held every threshold{{if .Upper}}; {{printf "%.4g" .Upper}}/s broke one{{end}}{{else}}Not found: even the first step broke a threshold{{end}}</p>
<p>Confidence: <b>{{.Confidence}}</b>{{if .Why}}: {{.Why}}{{end}}</p>
<p>Thresholds: {{range $i, $t := .Thresholds}}{{if $i}}, {{end}}<code>{{$t}}</code>{{end}}</p>
{{end}}{{if .Steps}}<table id="steps"><tr><th>step</th><th>rate</th><th class="l">series</th><th>requests</th><th>p50</th><th>p99</th><th>errors</th><th class="l">verdict</th></tr>
{{range $i, $s := .Steps}}<tr><td>{{inc $i}}</td><td>{{$s.Rate}}</td><td class="l">{{$s.Series}}</td><td>{{$s.Requests}}</td><td>{{$s.P50}}</td><td>{{$s.P99}}</td><td>{{$s.Errors}}</td><td class="l {{if $s.Held}}held{{else}}broke{{end}}">{{$s.Verdict}}</td></tr>
{{end}}</table>{{end}}
{{if .Changes}}<h2>Changes against {{(index .Runs 0).Name}}</h2>
<table id="changes"><tr><th class="l">series</th><th class="l">run</th><th>p50</th><th>change</th><th>p99</th><th>change</th><th>throughput</th><th>change</th></tr>
{{range .Changes}}<tr><td class="l">{{.Series}}</td><td class="l">{{.Run}}</td><td>{{.P50A}} → {{.P50B}}</td><td class="{{if .P50Worse}}worse{{end}}">{{.P50D}}</td><td>{{.P99A}} → {{.P99B}}</td><td class="{{if .P99Worse}}worse{{end}}">{{.P99D}}</td><td>{{.RA}} → {{.RB}}</td><td class="{{if .RateWorse}}worse{{end}}">{{.RD}}</td></tr>
{{end}}</table>{{end}}
{{range .Charts}}<h2>{{.Title}}</h2>
<svg class="chart" id="{{.ID}}" width="{{.W}}" height="{{.H}}" viewBox="0 0 {{.W}} {{.H}}" role="img" aria-label="{{.Label}}">
<rect x="{{.PlotX}}" y="{{.PlotY}}" width="{{.PlotW}}" height="{{.PlotH}}" fill="#fafafa" stroke="#d1d5db"/>
{{$c := .}}{{range .YTicks}}<line x1="{{$c.PlotX}}" x2="{{printf "%.1f" (add $c.PlotX $c.PlotW)}}" y1="{{printf "%.1f" .Pos}}" y2="{{printf "%.1f" .Pos}}" stroke="#e5e7eb"/><text x="{{printf "%.1f" (add $c.PlotX -6)}}" y="{{printf "%.1f" (add .Pos 4)}}" text-anchor="end">{{.Label}}</text>
{{end}}{{range .XTicks}}<line x1="{{printf "%.1f" .Pos}}" x2="{{printf "%.1f" .Pos}}" y1="{{$c.PlotY}}" y2="{{printf "%.1f" (add $c.PlotY $c.PlotH)}}" stroke="#e5e7eb"/><text x="{{printf "%.1f" .Pos}}" y="{{printf "%.1f" (add $c.PlotY (add $c.PlotH 16))}}" text-anchor="middle">{{.Label}}</text>
{{end}}{{range .Marks}}<line x1="{{printf "%.1f" .X}}" x2="{{printf "%.1f" .X}}" y1="{{$c.PlotY}}" y2="{{printf "%.1f" (add $c.PlotY $c.PlotH)}}" stroke="#6b7280" stroke-dasharray="4 3"/><text x="{{printf "%.1f" (add .X 3)}}" y="{{printf "%.1f" (add $c.PlotY 11)}}">{{.Label}}</text>
{{end}}{{range .Lines}}<polyline class="series" points="{{.Points}}" fill="none" stroke="{{.Color}}" stroke-width="2"{{if .Dashed}} stroke-dasharray="5 3"{{end}}><title>{{.Name}}</title></polyline>
{{end}}{{if .Empty}}<text x="{{printf "%.1f" (add .PlotX 20)}}" y="{{printf "%.1f" (add .PlotY 30)}}">{{.Empty}}</text>{{end}}
<text x="{{printf "%.1f" (add .PlotX (div .PlotW 2))}}" y="{{printf "%d" .H}}" dy="-4" text-anchor="middle">{{.XName}}</text>
</svg>
<p class="legend">{{range .Lines}}<span><i class="swatch" style="background:{{.Color}}"></i>{{.Name}}</span>{{end}}</p>
{{end}}
{{range .Runs}}<h2>{{if $.Compare}}{{.Name}}: {{end}}Series</h2>
<table class="series"><tr><th class="l">series</th><th>answers</th><th>rate/s</th><th>errors</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th></tr>
{{range .Series}}<tr><td class="l">{{.Name}}</td><td>{{.Count}}</td><td>{{.Rate}}</td><td>{{.Errors}}</td><td>{{.P50}}</td><td>{{.P90}}</td><td>{{.P99}}</td><td>{{.P999}}</td><td>{{.Max}}</td></tr>
{{end}}</table>
{{if .Stages}}<h2>{{if $.Compare}}{{.Name}}: {{end}}Stages</h2>
<table><tr><th>stage</th><th class="l">time</th><th>load</th><th>requests</th><th>ok/s</th><th>not ok</th><th>p50</th><th>p99</th></tr>
{{range .Stages}}<tr><td>{{.Stage}}</td><td class="l">{{.Time}}</td><td>{{.Load}}</td><td>{{.Requests}}</td><td>{{.Rate}}</td><td>{{.Errors}}</td><td>{{.P50}}</td><td>{{.P99}}</td></tr>
{{end}}</table>{{end}}
<h2>{{if $.Compare}}{{.Name}}: {{end}}Errors</h2>
{{if .Errors}}<table class="errors"><tr><th class="l">kind</th><th class="l">message</th><th>count</th></tr>
{{range .Errors}}<tr><td class="l">{{.Class}}</td><td class="l">{{.Detail}}</td><td>{{.Count}}</td></tr>
{{end}}</table>{{else}}<p>No errors.</p>{{end}}
<h2>{{if $.Compare}}{{.Name}}: {{end}}Configuration</h2>
<table class="config">{{range .Config}}<tr><th class="l">{{index . 0}}</th><td class="l">{{index . 1}}</td></tr>
{{end}}</table>
{{end}}
<p style="color:#6b7280">Written by mcptape report. Latencies of the open model are measured from each arrival's intended time.</p>
</body></html>
`))
