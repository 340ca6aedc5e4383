package main

// The live display of "mcptape load": an mpb bar on a terminal, plain
// lines otherwise.

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/vbauerster/cupwriter"
	"github.com/vbauerster/mpb/v8"
	"github.com/vbauerster/mpb/v8/decor"

	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/loadgen"
)

// liveOptions adds to opts the notices and the live progress of a run:
// on a terminal, the mpb bar (returned, to be finished after the run) with
// the notices printed above it; otherwise a plain line every --every; with
// --quiet, the notices only.
func liveOptions(st *stdio, f *loadFlags, opts []loadgen.Option) ([]loadgen.Option, *liveBar, error) {
	notice := loadgen.WithNotice(func(s string) { fmt.Fprintf(st.err, "load: %s\n", s) })
	if f.quiet {
		return append(opts, notice), nil, nil
	}
	if f.every <= 0 {
		return nil, nil, usageError("--every must be positive")
	}
	if !isTerminal(st.err) {
		return append(opts, notice, loadgen.WithLive(f.every, func(l loadgen.Live) { fmt.Fprintln(st.err, liveLine(l)) })), nil, nil
	}
	bar := newLiveBar(st.err)
	// notices go above the bar
	return append(opts, loadgen.WithNotice(func(s string) { fmt.Fprintf(bar.p, "load: %s\n", s) }),
		loadgen.WithLive(200*time.Millisecond, bar.update)), bar, nil
}

// isTerminal reports whether w is a terminal, as the bar's own console
// writer (cupwriter, which asks the operating system) sees it: /dev/null
// is a character device, not a terminal. A writer that says whether it is
// one (IsTerminal, as a test's fake terminal) is taken at its word.
func isTerminal(w io.Writer) bool {
	if t, ok := w.(interface{ IsTerminal() bool }); ok {
		return t.IsTerminal()
	}
	if _, ok := w.(*os.File); !ok {
		return false
	}
	return cupwriter.New(w, false).IsTerminal()
}

// barScale is the bar's total: it counts the run in thousandths.
const barScale = 1000

// liveBar is the live display on a terminal, two rows: an mpb bar with
// elapsed of total (or requests of total) on its left and the ok requests
// per second, the requests in flight and the p99 so far on its right;
// under it, what became of the requests so far, in the words of the
// report's headline (liveCounts). Each fits 80 columns.
type liveBar struct {
	p      *mpb.Progress
	bar    *mpb.Bar
	counts *mpb.Bar      // the row of counts: a bar drawn without a filler
	out    io.Writer     // the terminal
	above  []*lineWriter // the writers aboveBar gave (the servers' stderr, load's own lines): finish flushes each
	mu     sync.Mutex
	l      loadgen.Live
}

// newLiveBar starts the display on w (a terminal, or any writer for
// tests); extra options are for tests (manual refresh).
func newLiveBar(w io.Writer, opts ...mpb.ContainerOption) *liveBar {
	lb := &liveBar{out: w}
	term := isTerminal(w) // a fake terminal is drawn on as a terminal
	cw := &crWriter{Writer: cupwriter.New(w, term), fresh: true, term: term}
	lb.p = mpb.New(append([]mpb.ContainerOption{mpb.WithConsoleWriter(cw), mpb.WithRefreshRate(200 * time.Millisecond)}, opts...)...)
	lb.bar = lb.p.New(barScale, mpb.BarStyle().Lbound("[").Filler("=").Tip(">").Padding(" ").Rbound("]"),
		mpb.PrependDecorators(decor.Any(func(decor.Statistics) string { return lb.head() }, decor.WCSyncSpaceR)),
		mpb.AppendDecorators(decor.Any(func(st decor.Statistics) string { return lb.tail(st.AvailableWidth) })))
	lb.counts = lb.p.New(barScale, mpb.NopStyle(), mpb.BarFillerTrim(), mpb.PrependDecorators(decor.Any(func(decor.Statistics) string {
		lb.mu.Lock()
		defer lb.mu.Unlock()
		return "  " + strings.Join(liveCounts(lb.l), ", ")
	})))
	return lb
}

// crWriter is mpb's console writer with a carriage return before each
// frame, so that a frame starts at the left edge even when the terminal
// echoed something (^C) where the cursor was.
type crWriter struct {
	*cupwriter.Writer
	fresh bool // nothing written since the last frame
	term  bool // isTerminal
}

// IsTerminal tells mpb whether to draw frames as on a terminal.
func (w *crWriter) IsTerminal() bool { return w.term }

func (w *crWriter) cr() {
	if w.fresh {
		w.fresh = false
		_ = w.Writer.WriteByte('\r')
	}
}

// Write writes lines printed above the bar.
func (w *crWriter) Write(b []byte) (int, error) { w.cr(); return w.Writer.Write(b) }

// ReadFrom takes one row of the frame.
func (w *crWriter) ReadFrom(r io.Reader) (int64, error) { w.cr(); return w.Writer.ReadFrom(r) }

// Flush writes the frame out.
func (w *crWriter) Flush(lines int) error { w.fresh = true; return w.Writer.Flush(lines) }

// Fallback terminal size, for a terminal that reports none (a
// pseudo-terminal never sized, as under script(1) or some CI runners):
// mpb would draw empty frames at width 0.
const (
	fallbackColumns = 80
	fallbackRows    = 24
)

// GetTermSize returns the terminal's size, each dimension the terminal
// does not report (0, or an error) replaced by the fallback.
func (w *crWriter) GetTermSize() (width, height int, err error) {
	width, height, err = w.Writer.GetTermSize()
	if err != nil || width <= 0 {
		width = fallbackColumns
	}
	if err != nil || height <= 0 {
		height = fallbackRows
	}
	return width, height, nil
}

// update takes the latest figures (the WithLive callback).
func (lb *liveBar) update(l loadgen.Live) {
	lb.mu.Lock()
	lb.l = l
	lb.mu.Unlock()
	// the bar completes only in finish
	lb.bar.SetCurrent(min(int64(runFraction(l)*barScale), barScale-1))
}

// aboveBar returns the writer of the servers' stderr while the bar is
// shown: their lines are printed above it, as the notices are, each whole
// (a lineWriter holds an unfinished one), so that a server's line and a
// frame of the bar never share a line of the terminal. Each call gives a
// writer of its own (its unfinished line is its own); finish passes on
// the line each still holds; once the bar is gone, lines go to the
// terminal as they come.
func (lb *liveBar) aboveBar() io.Writer {
	w := &lineWriter{out: func(b []byte) {
		if _, err := lb.p.Write(b); err != nil { // the bar is gone
			_, _ = lb.out.Write(b)
		}
	}}
	lb.mu.Lock()
	lb.above = append(lb.above, w)
	lb.mu.Unlock()
	return w
}

// finish draws the bar one last time, full or, when the run was
// interrupted, where it stopped, and ends the display. A line of the
// servers still unfinished is printed above it first.
func (lb *liveBar) finish(interrupted bool) {
	lb.mu.Lock()
	above := lb.above
	lb.mu.Unlock()
	for _, w := range above {
		w.Flush()
	}
	for _, b := range []*mpb.Bar{lb.bar, lb.counts} {
		if interrupted {
			b.Abort(false)
		} else {
			b.SetCurrent(barScale)
		}
	}
	lb.p.Wait()
}

// head renders the bar's left side: "load 12.3s of 30s" or "load 450 of
// 1000 requests".
func (lb *liveBar) head() string {
	lb.mu.Lock()
	l := lb.l
	lb.mu.Unlock()
	s := "load " + l.Elapsed.Round(time.Second/10).String()
	switch {
	case l.Total > 0:
		s += " of " + l.Total.String()
	case l.Planned > 0:
		s = fmt.Sprintf("load %d of %s", l.Requests, english.Count(l.Planned, "request"))
	}
	return s
}

// minBarCells is the fewest cells the bar keeps between its brackets:
// the text on its right is shortened to leave them (fitRates).
const minBarCells = 15

// tail renders the bar's right side in avail columns (what the left side
// left of the row): the live rates, as long a form of them as leaves the
// bar minBarCells cells (fitRates; the bar takes 4 columns more, its
// brackets and the spaces around it).
func (lb *liveBar) tail(avail int) string {
	lb.mu.Lock()
	l := lb.l
	lb.mu.Unlock()
	return fitRates(l, avail-4-minBarCells)
}

// liveRates gives the ok requests per second, the requests in flight and
// the p99 so far.
func liveRates(l loadgen.Live) string {
	return fmt.Sprintf("%.0f ok/s, %s, p99 %s", l.Rate, inFlight(l), loadgen.FormatLatency(l.P99))
}

// stallFactor is how many times the p99 the oldest request in flight must
// have been waiting, and for a second at least, for its age to be kept
// before the p99 when the bar's right side is shortened: a stall that the
// p99, of the answers, does not show yet.
const stallFactor = 10

// fitRates returns the longest form of the live rates that fits in width
// columns, the ok rate alone when none does. The forms drop the least
// useful text first: every figure (liveRates); without the age of the
// oldest request in flight (with it and without the p99 instead, when that
// request stalls: stallFactor); the ok rate and the p99; the ok rate.
func fitRates(l loadgen.Live, width int) string {
	rate, p99 := fmt.Sprintf("%.0f ok/s", l.Rate), "p99 "+loadgen.FormatLatency(l.P99)
	second := fmt.Sprintf("%s, %d in flight, %s", rate, l.InFlight, p99)
	if l.InFlight > 0 && l.Oldest >= time.Second && l.Oldest > stallFactor*l.P99 {
		second = rate + ", " + inFlight(l)
	}
	for _, s := range []string{liveRates(l), second, rate + ", " + p99} {
		if utf8.RuneCountInString(s) <= width {
			return s
		}
	}
	return rate
}

// liveCounts says what became of the requests so far in the words of the
// report's headline: "500 ok", then each failure that happened, "2 error
// answers", "1 no answer", "3 cancelled on purpose", "4 dropped" (a
// failure at 0 is left out: the report gives every one).
func liveCounts(l loadgen.Live) []string {
	parts := []string{fmt.Sprintf("%d ok", l.OK)}
	if l.ErrorAnswers > 0 {
		parts = append(parts, english.Count(l.ErrorAnswers, "error answer"))
	}
	for _, c := range []struct {
		n    int64
		noun string
	}{{l.NoAnswer, "no answer"}, {l.Cancelled, "cancelled on purpose"}, {l.Dropped, "dropped"}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.n, c.noun))
		}
	}
	return parts
}

// inFlight says how many requests are in flight and, when some are, the
// age of the oldest: "3 in flight (oldest 12.3s)". The p99 is of the
// answers only; the oldest age shows a stall while it lasts.
func inFlight(l loadgen.Live) string {
	s := fmt.Sprintf("%d in flight", l.InFlight)
	if l.InFlight > 0 {
		s += " (oldest " + loadgen.FormatLatency(l.Oldest) + ")"
	}
	return s
}

// runFraction is how far the run is, by time or by requests (whichever is
// further), from 0 to 1; 0 when it has no bound.
func runFraction(l loadgen.Live) float64 {
	frac := 0.0
	if l.Total > 0 {
		frac = float64(l.Elapsed) / float64(l.Total)
	}
	if l.Planned > 0 {
		frac = max(frac, float64(l.Requests)/float64(l.Planned))
	}
	return min(max(frac, 0), 1)
}

// liveLine renders the live figures on two lines, as the bar's two rows:
// the time, sessions and rates, then the counts (liveCounts).
func liveLine(l loadgen.Live) string {
	var b strings.Builder
	b.WriteString("load: ")
	b.WriteString(l.Elapsed.Round(time.Second / 10).String())
	if l.Total > 0 {
		b.WriteString(" of " + l.Total.String())
	}
	if l.Planned > 0 {
		fmt.Fprintf(&b, ", %d of %s", l.Requests, english.Count(l.Planned, "request"))
	}
	fmt.Fprintf(&b, ", %s, %s\nload:   %s", english.Count(l.Sessions, "session"), liveRates(l), strings.Join(liveCounts(l), ", "))
	return b.String()
}
