package loadgen

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/internal/termsafe"
)

// WriteText writes the report as a human-readable table: the run, then per
// series count, rate, mean, p50, p90, p99, p99.9 and max, then the errors
// by class. A capacity search's (Capacity) is the search and its steps,
// each with its rate, figures and verdict, instead of the run's series.
func (rep *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "target    %s (protocol %s)\n", rep.Target, rep.Protocol)
	if rep.Capacity != nil { // a search: its steps, each a run of its own
		writeSearchHead(&b, rep)
		writeTrouble(&b, rep)
		writeCapacity(&b, rep.Capacity)
	} else {
		writeRunHead(&b, rep)
		writeTrouble(&b, rep)
		writeSeries(&b, rep)
		writeStages(&b, rep)
	}
	if len(rep.Errors) > 0 {
		fmt.Fprintf(&b, "\nerrors    %d, by kind and message\n", rep.ErrorTotal)
		for _, e := range rep.Errors {
			b.WriteString(errorLine(e) + "\n")
		}
	}
	if p := rep.Progress; p != nil {
		fmt.Fprintf(&b, "\nprogress  %s with progress, %s, %d after the response, %d not increasing, %d unknown token\n",
			english.Count(p.CallsWithProgress, "call"), english.Count(p.Notifications, "notification"), p.AfterResponse, p.NotIncreasing, p.UnknownToken)
	}
	if bt := rep.Batch; bt != nil {
		spec := "has batches"
		if !bt.InSpec {
			spec = "has no batches"
		}
		outcomes := make([]string, len(bt.Outcomes))
		for i, o := range bt.Outcomes {
			outcomes[i] = fmt.Sprintf("%d %s", o.Count, o.Class)
		}
		fmt.Fprintf(&b, "\nbatches   of %d, negotiated %s (%s), %s: %s\n", bt.Size, bt.Negotiated, spec, bt.Verdict(), strings.Join(outcomes, "; "))
	}
	if c := rep.Cancel; c != nil {
		fmt.Fprintf(&b, "\ncancel    %s picked, %d cancelled (the rest answered first), %d answered anyway, %d quiet at once\n",
			english.Count(c.Chosen, "call"), c.Sent, c.AnsweredAnyway, c.Quiet)
	}
	if g := rep.GetStream; g != nil {
		fmt.Fprintf(&b, "\nget       %d of %d %s opened their GET stream; server messages on GET streams: %d (%s, %s)\n",
			g.Opened, rep.Sessions, english.Noun(rep.Sessions, "session"), g.Messages, english.Count(g.Notifications, "notification"), english.Count(g.Requests, "request"))
	}
	for _, warn := range rep.Warnings {
		fmt.Fprintf(&b, "\nwarning   %s\n", warn)
	}
	// Error messages quote the server and series names come from tapes:
	// their control characters stay text.
	_, err := io.WriteString(w, termsafe.String(b.String()))
	if err != nil {
		return fmt.Errorf("loadgen: write report: %w", err)
	}
	return nil
}

// writeRunHead writes the lines that describe a run: its model, its
// length, its requests.
func writeRunHead(b *strings.Builder, rep *Report) {
	model := rep.Model + ", " + english.Count(rep.Sessions, "session")
	if rep.Model == "open" {
		model += fmt.Sprintf(", %g arrivals/s", rep.Rate)
	}
	if n := len(rep.Stages); n > 0 {
		model += " at the peak, in " + english.Count(n, "stage")
	}
	if rep.Generators > 1 {
		model += ", " + english.Count(rep.Generators, "generator") + " merged"
	}
	fmt.Fprintf(b, "model     %s\n", model)
	writeDuration(b, rep)
	lines := rep.CountLines(true)
	fmt.Fprintf(b, "requests  %s\n          %s; %s set up\n", lines[0], lines[1], english.Count(rep.Setups, "session"))
}

// CountLines says what became of the requests, in two lines: those sent
// and how each ended (ok, answered with an error, failed without an
// answer, cancelled on purpose), each share over the requests sent; then
// the open model's arrivals dropped (over the arrivals: sent or dropped)
// and the requests not ok in all (error answers, no answer, dropped: the
// share ErrorRatio gives and "errors<N%" judges). With rates, the sent
// requests per second over the sending (SendingTime), the ok ones over the
// sending and the wait for the answers in flight (AnswerTime).
//
//	21160 sent (2645.0/s): 21100 ok (99.72%, 2637.5/s), 50 error answers (0.24%), 10 no answer (0.05%)
//	3 dropped, never sent (0.01% of 21163 arrivals); 63 not ok (0.30%)
func (rep *Report) CountLines(rates bool) [2]string {
	rate := func(n int64, over time.Duration) string {
		if !rates || over <= 0 {
			return ""
		}
		return fmt.Sprintf("%.1f/s", float64(n)/over.Seconds())
	}
	var l [2]string
	l[0] = fmt.Sprintf("%d sent%s: %d ok%s, %s%s, %d no answer%s", rep.Requests, paren(rate(rep.Requests, rep.SendingTime())),
		rep.OK, paren(share(rep.OK, rep.Requests), rate(rep.OK, rep.AnswerTime())),
		english.Count(rep.ErrorAnswers, "error answer"), paren(share(rep.ErrorAnswers, rep.Requests)),
		rep.NoAnswer, paren(share(rep.NoAnswer, rep.Requests)))
	if c := rep.Cancel; c != nil {
		l[0] += fmt.Sprintf(", %d cancelled on purpose%s", c.Sent, paren(share(c.Sent, rep.Requests)))
	}
	arrivals := rep.Requests + rep.Dropped
	if rep.Model == "open" || rep.Dropped > 0 {
		l[1] = fmt.Sprintf("%d dropped, never sent%s; ", rep.Dropped, paren(withOf(share(rep.Dropped, arrivals), arrivals, "arrival")))
	}
	l[1] += fmt.Sprintf("%d not ok%s", rep.RequestErrors, errorShare(rep))
	return l
}

// share is n over of as a percentage, "" when of is 0.
func share(n, of int64) string {
	if of <= 0 {
		return ""
	}
	return fmt.Sprintf("%.2f%%", 100*float64(n)/float64(of))
}

// withOf is "SHARE of N NOUNs", "" when share is.
func withOf(share string, n int64, noun string) string {
	if share == "" {
		return ""
	}
	return share + " of " + english.Count(n, noun)
}

// paren joins the non-empty parts in parentheses after a space, "" when
// every part is empty.
func paren(parts ...string) string {
	var kept []string
	for _, p := range parts {
		if p != "" {
			kept = append(kept, p)
		}
	}
	if len(kept) == 0 {
		return ""
	}
	return " (" + strings.Join(kept, ", ") + ")"
}

// writeSearchHead writes the lines that describe a capacity search: its
// model, how many steps it ran at which rates (each a run of its own,
// with its sessions), its length and its requests in all.
func writeSearchHead(b *strings.Builder, rep *Report) {
	c := rep.Capacity
	rates := ""
	if n := len(c.Steps); n > 0 {
		lo, hi := c.Steps[0].Rate, c.Steps[0].Rate
		for _, s := range c.Steps {
			lo, hi = min(lo, s.Rate), max(hi, s.Rate)
		}
		rates = fmt.Sprintf(" at %.4g/s", lo)
		if hi > lo {
			rates = fmt.Sprintf(" from %.4g/s to %.4g/s", lo, hi)
		}
	}
	fmt.Fprintf(b, "model     capacity search, open model, %s per step, %s%s\n",
		english.Count(rep.Sessions, "session"), english.Count(len(c.Steps), "step"), rates)
	writeDuration(b, rep)
	lines := rep.CountLines(false)
	fmt.Fprintf(b, "requests  %s\n          %s; in all steps with their warm-ups\n", lines[0], lines[1])
}

// writeDuration writes the length of the run and where its time went.
func writeDuration(b *strings.Builder, rep *Report) {
	dur := rep.PhaseText()
	if rep.Interrupted {
		dur += " (interrupted)"
	}
	fmt.Fprintf(b, "duration  %s\n", dur)
}

// errorShare is the share of requests not ok (ErrorRatio), " (1.23%)",
// or "" when none was sent or dropped.
func errorShare(rep *Report) string {
	if rep.Requests+rep.Dropped == 0 {
		return ""
	}
	return fmt.Sprintf(" (%.2f%%)", 100*rep.ErrorRatio())
}

// writeSeries writes the table of figures per series.
func writeSeries(b *strings.Builder, rep *Report) {
	b.WriteString("\n")
	width := len("series")
	for _, s := range rep.Series {
		width = max(width, len(s.Name))
	}
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%-*s\tanswers\trate/s\terrors\tmean\tp50\tp90\tp99\tp99.9\tmax\t\n", width, "series")
	for _, s := range rep.Series {
		errs := "-"
		if s.Requests > 0 {
			errs = fmt.Sprintf("%d (%.1f%%)", s.Errors, 100*s.ErrorRatio())
		}
		rate := fmt.Sprintf("%.1f", s.Rate)
		if IsSetupSeries(s.Name) { // no rate: see Series.Rate
			rate = "-"
		}
		if s.Count == 0 { // nothing measured: every request failed
			fmt.Fprintf(tw, "%-*s\t0\t%s\t%s\t-\t-\t-\t-\t-\t-\t\n", width, s.Name, rate, errs)
			continue
		}
		fmt.Fprintf(tw, "%-*s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", width, s.Name, s.Count, rate, errs,
			dur3(s.Mean), dur3(s.P50), dur3(s.P90), dur3(s.P99), dur3(s.P999), dur3(s.Max))
	}
	_ = tw.Flush()
	for _, s := range rep.Series {
		if s.Tokens > 0 {
			fmt.Fprintf(b, "tokens    %s: %d in streamed answers, %.1f/s\n", s.Name, s.Tokens, s.TokensPerSec)
		}
	}
}

// writeTrouble writes the lines that say what went wrong with the server
// or the run: the failure, the stdio servers that exited, the time the
// server could not be reached.
func writeTrouble(b *strings.Builder, rep *Report) {
	if rep.Failure != "" {
		fmt.Fprintf(b, "FAILED    %s\n", rep.Failure)
	}
	if len(rep.ServerExits) > 0 {
		var n int64
		var parts []string
		for _, e := range rep.ServerExits {
			n += e.Count
			parts = append(parts, fmt.Sprintf("%d with %s", e.Count, e.Class))
		}
		fmt.Fprintf(b, "exits     %s exited during the run: %s\n", english.Count(n, "stdio server"), strings.Join(parts, ", "))
	}
	if o := rep.Outage; o != nil {
		share := ""
		if rep.Duration > 0 {
			share = fmt.Sprintf(" (%.0f%% of the run)", 100*min(o.Down.Seconds()/rep.Duration.Seconds(), 1))
		}
		end := ""
		if o.DownAtEnd {
			end = "; still unreachable at the end"
		}
		fmt.Fprintf(b, "outage    server unreachable %s, %s in all%s, %s failed meanwhile%s\n",
			english.Count(o.Periods, "time"), dur3(o.Down), share, english.Count(o.Attempts, "attempt"), end)
	}
}

// FormatLatency writes a latency with about 3 significant digits in the
// unit that suits it: "870ns", "12.3µs", "4.56ms", "1.23s".
func FormatLatency(d time.Duration) string { return dur3(d) }

// dur3 prints a duration with about 3 significant digits.
func dur3(d time.Duration) string {
	// the bounds are where 3 digits round up to the next unit
	switch {
	case d >= 999500*time.Millisecond: // whole seconds: %.3g would write 1.23e+03s
		return fmt.Sprintf("%.0fs", d.Seconds())
	case d >= 999500*time.Microsecond:
		return fmt.Sprintf("%.3gs", d.Seconds())
	case d >= 999500*time.Nanosecond:
		return fmt.Sprintf("%.3gms", float64(d)/1e6)
	case d >= time.Microsecond:
		return fmt.Sprintf("%.3gµs", float64(d)/1e3)
	default:
		return fmt.Sprintf("%dns", int64(d))
	}
}
