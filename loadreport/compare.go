package loadreport

import (
	"fmt"
	"math"
)

// comparison fills the page of two or more runs: throughput and p99 over
// time overlaid (time from each run's start), the percentile
// distributions of each of the first run's busiest series overlaid, and
// the changes against the first run.
func (p *page) comparison(runs []Run) error {
	base := runs[0].Report
	names := requestSeries(base, maxTimeSeries)
	total := 0.0
	for _, r := range runs {
		total = math.Max(total, r.Report.Duration.Seconds())
	}
	xa := axis{lo: 0, hi: math.Max(total, 1e-3)}
	xt := timeTicks(xa.hi)
	var thr []series
	for i, r := range runs {
		s := series{name: r.Name, color: palette[i%len(palette)]}
		for _, in := range r.Report.Intervals {
			if d := in.Duration.Seconds(); d > 0 {
				s.pts = append(s.pts, point{(in.Offset + in.Duration/2).Seconds(), float64(in.OK) / d})
			}
		}
		thr = append(thr, s)
	}
	p.Charts = append(p.Charts, newChart("throughput", "Throughput over time (ok/s)", "time", "per second", thr, xa, secLabel, rateLabel, xt))
	for k, name := range names {
		var lat []series
		var dist []distLine
		for i, r := range runs {
			color := palette[i%len(palette)]
			s := series{name: r.Name, color: color}
			for _, in := range r.Report.Intervals {
				for _, is := range in.Series {
					if is.Name == name && is.Count > 0 {
						s.pts = append(s.pts, point{(in.Offset + in.Duration/2).Seconds(), msf(is.P99)})
					}
				}
			}
			lat = append(lat, s)
			if rs := r.Report.Find(name); rs != nil && rs.Count > 0 {
				dist = append(dist, distLine{name: r.Name, color: color, s: rs})
			}
		}
		p.Charts = append(p.Charts, newChart(fmt.Sprintf("p99-%d", k), "p99 over time: "+name, "time", "latency", lat, xa, secLabel, msLabel, xt))
		c, err := distChart(fmt.Sprintf("distribution-%d", k), "Latency by percentile: "+name, dist)
		if err != nil {
			return err
		}
		p.Charts = append(p.Charts, c)
	}
	for _, r := range runs[1:] {
		for _, name := range requestSeries(base, len(base.Series)) {
			a, b := base.Find(name), r.Report.Find(name)
			if b == nil || b.Count == 0 {
				p.Changes = append(p.Changes, change{Series: name, Run: r.Name, P50B: "absent", P99B: "absent", RB: "absent"})
				continue
			}
			c := change{Series: name, Run: r.Name, P50A: ms(a.P50), P50B: ms(b.P50), P99A: ms(a.P99), P99B: ms(b.P99),
				RA: fmt.Sprintf("%.1f/s", a.Rate), RB: fmt.Sprintf("%.1f/s", b.Rate)}
			var d float64
			c.P50D, d = delta(float64(a.P50), float64(b.P50))
			c.P50Worse = d > 0.05
			c.P99D, d = delta(float64(a.P99), float64(b.P99))
			c.P99Worse = d > 0.05
			c.RD, d = delta(a.Rate, b.Rate)
			c.RateWorse = d < -0.05
			p.Changes = append(p.Changes, c)
		}
	}
	return nil
}

// delta returns the relative change from a to b, written and as a
// fraction.
func delta(a, b float64) (string, float64) {
	if a == 0 {
		return "-", 0
	}
	d := (b - a) / a
	return fmt.Sprintf("%+.1f%%", 100*d), d
}
