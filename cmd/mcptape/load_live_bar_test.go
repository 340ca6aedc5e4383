package main

import (
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/vbauerster/mpb/v8"

	"github.com/mcptape/mcptape/loadgen"
)

// TestLiveBarFits80Columns draws the bar on a terminal of 80 columns (a
// terminal that gives no size is taken as one) with every kind of count
// at once: each row fits, the bar with at least 5 cells and the figures
// of its right side, the row under it with the counts in the report's
// words.
func TestLiveBarFits80Columns(t *testing.T) {
	term := &fakeTerminal{}
	refresh := make(chan any)
	lb := newLiveBar(term, mpb.WithManualRefresh(refresh))
	lb.update(loadgen.Live{Elapsed: 12300 * time.Millisecond, Total: 30 * time.Second, Rate: 2637, OK: 21100, ErrorAnswers: 50, NoAnswer: 10,
		Cancelled: 2, Dropped: 3, InFlight: 64, Oldest: 1230 * time.Millisecond, P99: 4560 * time.Microsecond})
	refresh <- time.Now()
	lb.finish(false)
	ansi := regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")
	frames := 0
	for _, line := range strings.Split(ansi.ReplaceAllString(term.String(), ""), "\n") {
		line = strings.TrimPrefix(line, "\r")
		if line == "" {
			continue
		}
		frames++
		if n := utf8.RuneCountInString(line); n > fallbackColumns {
			t.Errorf("frame of %d columns: %q", n, line)
		}
		if open, shut := strings.Index(line, "["), strings.LastIndex(line, "]"); open >= 0 {
			if shut-open-1 < 5 || !strings.HasSuffix(line, "] 2637 ok/s, 64 in flight (oldest 1.23s), p99 4.56ms") {
				t.Errorf("bar %q: want 5 cells or more and its figures", line)
			}
		} else if line != "  21100 ok, 50 error answers, 10 no answer, 2 cancelled on purpose, 3 dropped" {
			t.Errorf("row of counts %q", line)
		}
	}
	if frames == 0 {
		t.Fatalf("no frame: %q", term.String())
	}
}
