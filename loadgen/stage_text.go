package loadgen

import (
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// writeStages writes the figures of each stage: one row per stage and
// request series.
func writeStages(b *strings.Builder, rep *Report) {
	if len(rep.Stages) == 0 {
		return
	}
	b.WriteString("\nstages    figures of the requests counted in each stage's time\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "stage\ttime\tload\tseries\tanswers\trate/s\terrors\tp50\tp90\tp99\tmax\t\n")
	for _, st := range rep.Stages {
		f := st.Figures
		span := fmt.Sprintf("%s+%s", st.Offset.Round(time.Millisecond), f.Duration.Round(time.Millisecond))
		load := stageLoad(st)
		rows := 0
		for _, s := range f.Series {
			if IsSetupSeries(s.Name) {
				continue
			}
			rows++
			errs := fmt.Sprintf("%d (%.1f%%)", s.Errors, 100*s.ErrorRatio())
			if s.Count == 0 {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t0\t0.0\t%s\t-\t-\t-\t-\t\n", st.Stage, span, load, s.Name, errs)
				continue
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%.1f\t%s\t%s\t%s\t%s\t%s\t\n", st.Stage, span, load, s.Name, s.Count, s.Rate, errs,
				dur3(s.P50), dur3(s.P90), dur3(s.P99), dur3(s.Max))
		}
		if rows == 0 {
			fmt.Fprintf(tw, "%d\t%s\t%s\t-\t0\t0.0\t%d\t-\t-\t-\t-\t\n", st.Stage, span, load, f.RequestErrors)
		}
	}
	_ = tw.Flush()
}

// stageLoad describes the load of a stage: "0→100/s", "50 sessions".
func stageLoad(st StageReport) string {
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	unit := " sessions"
	if st.Rate {
		unit = "/s"
	}
	if st.From == st.Target {
		return num(st.Target) + unit
	}
	return num(st.From) + "→" + num(st.Target) + unit
}

// writeCapacity writes the result of a capacity search and its steps.
func writeCapacity(b *strings.Builder, c *CapacityReport) {
	b.WriteString("\n")
	switch {
	case !c.Found:
		fmt.Fprintf(b, "capacity  NOT FOUND: even the first step broke a threshold\n")
	case c.Upper > 0:
		fmt.Fprintf(b, "capacity  %.4g/s held every threshold; %.4g/s broke one (bracket %.1f%%)\n", c.Rate, c.Upper, 100*c.Bracket)
	default:
		fmt.Fprintf(b, "capacity  %.4g/s held every threshold, the highest rate tried\n", c.Rate)
	}
	conf := c.Confidence
	if c.Why != "" {
		conf += ": " + c.Why
	}
	fmt.Fprintf(b, "confidence %s\n", conf)
	fmt.Fprintf(b, "search    %s; steps of %s after %s of warm-up, from %g/s, up to %g/s\n",
		strings.Join(c.Thresholds, ", "), c.Config.Step, c.Config.Warmup, c.Config.Start, c.Config.MaxRate)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "step\trate/s\tseries\trequests\tp50\tp99\terrors\tverdict\t\n")
	for i, s := range c.Steps {
		fmt.Fprintf(tw, "%d\t%.4g\t%s\t%d\t%s\t%s\t%.2f%%\t%s\t\n", i+1, s.Rate, s.Series, s.Requests, dur3(s.P50), dur3(s.P99), 100*s.Errors, s.Verdict())
	}
	_ = tw.Flush()
}
