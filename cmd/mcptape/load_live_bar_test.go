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
// at once, and with long figures on both sides: each row fits, the bar
// keeps minBarCells cells or more, its right side dropping the least
// useful figures first (the age of the oldest request in flight, unless
// it stalls, then the p99; then the in-flight count; a long left side and
// "(oldest …)" left the bar 2 cells, or none), the row under it with the
// counts in the report's words.
func TestLiveBarFits80Columns(t *testing.T) {
	tests := []struct {
		name string
		l    loadgen.Live
		tail string // the bar's right side
	}{
		{"every count, a stall", loadgen.Live{Elapsed: 12300 * time.Millisecond, Total: 30 * time.Second, Rate: 2637, OK: 21100, ErrorAnswers: 50, NoAnswer: 10,
			Cancelled: 2, Dropped: 3, InFlight: 64, Oldest: 1230 * time.Millisecond, P99: 4560 * time.Microsecond},
			"2637 ok/s, 64 in flight (oldest 1.23s)"},
		{"short figures", loadgen.Live{Elapsed: time.Second, Total: 2 * time.Second, Rate: 8, OK: 9, InFlight: 1, Oldest: 3 * time.Millisecond, P99: 4 * time.Millisecond},
			"8 ok/s, 1 in flight (oldest 3ms), p99 4ms"},
		{"no stall", loadgen.Live{Elapsed: 5 * time.Second, Total: 30 * time.Second, Rate: 2637, OK: 13000, InFlight: 64, Oldest: 12300 * time.Microsecond, P99: 45600 * time.Microsecond},
			"2637 ok/s, 64 in flight, p99 45.6ms"},
		{"long time", loadgen.Live{Elapsed: 83400 * time.Millisecond, Total: 10 * time.Minute, Rate: 12345, OK: 1029000, InFlight: 1024, Oldest: 12300 * time.Millisecond, P99: 1230 * time.Millisecond},
			"12345 ok/s, 1024 in flight, p99 1.23s"},
		{"long time, a long stall", loadgen.Live{Elapsed: 83400 * time.Millisecond, Total: 10 * time.Minute, Rate: 12345, OK: 1029000, InFlight: 1024, Oldest: 123 * time.Second, P99: 1230 * time.Millisecond},
			"12345 ok/s, p99 1.23s"},
		{"long request count", loadgen.Live{Elapsed: 83400 * time.Millisecond, Requests: 123456, Planned: 1000000, Rate: 123456, OK: 123000, InFlight: 10000, Oldest: 4985 * time.Second, P99: 999 * time.Millisecond},
			"123456 ok/s, p99 999ms"},
	}
	ansi := regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			term := &fakeTerminal{}
			refresh := make(chan any)
			lb := newLiveBar(term, mpb.WithManualRefresh(refresh))
			lb.update(tc.l)
			refresh <- time.Now()
			lb.finish(false)
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
					if shut-open-1 < minBarCells || !strings.HasSuffix(line, "] "+tc.tail) {
						t.Errorf("bar %q: want %d cells or more and %q", line, minBarCells, tc.tail)
					}
				} else if want := "  " + strings.Join(liveCounts(tc.l), ", "); line != want {
					t.Errorf("row of counts %q, want %q", line, want)
				} else if frames == 1 {
					t.Errorf("no bar before the row of counts %q", line)
				}
			}
			if frames == 0 {
				t.Fatalf("no frame: %q", term.String())
			}
		})
	}
	// Narrower still, the ok rate alone.
	if got := fitRates(tests[len(tests)-1].l, 12); got != "123456 ok/s" {
		t.Errorf("rates in 12 columns %q", got)
	}
	// The counts in the report's words, each failure that happened.
	if got := strings.Join(liveCounts(tests[0].l), ", "); got != "21100 ok, 50 error answers, 10 no answer, 2 cancelled on purpose, 3 dropped" {
		t.Errorf("counts %q", got)
	}
}
