package analysis

import (
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestInspectOffsetsWithinSpans: in the text report, every offset a
// problem gives ("#12 +0.205s [session]") counts from the same origin as
// the sessions' spans ("ID  +0.200s to +0.205s (5.00ms)"), so it falls
// within its session's span; the legend says where they count from.
func TestInspectOffsetsWithinSpans(t *testing.T) {
	spanRe := regexp.MustCompile(`^  (\S+)  \+(\d+\.\d+)s to \+(\d+\.\d+)s \(`)
	exRe := regexp.MustCompile(`^ +#\d+ \+(\d+\.\d+)s \[([^\]]+)\]`)
	secs := func(s string) float64 {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, name := range []string{"violations", "operations", "everything-http", "cut"} {
		t.Run(name, func(t *testing.T) {
			rep, err := Inspect(context.Background(), filepath.Join("..", "testdata", "analysis", name+".jsonl.zst"))
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			if err := WriteText(&b, rep); err != nil {
				t.Fatal(err)
			}
			text := b.String()
			if !strings.Contains(text, "time since the tape started") {
				t.Errorf("no legend for the offsets:\n%s", text)
			}
			type span struct{ from, to float64 }
			spans := map[string]span{}
			for _, line := range strings.Split(text, "\n") {
				if m := spanRe.FindStringSubmatch(line); m != nil {
					spans[m[1]] = span{secs(m[2]), secs(m[3])}
				}
			}
			if len(spans) != min(len(rep.Sessions), textSessions) {
				t.Fatalf("%d session spans in the text, want %d:\n%s", len(spans), len(rep.Sessions), text)
			}
			checked := 0
			for _, line := range strings.Split(text, "\n") {
				m := exRe.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				at, id := secs(m[1]), strings.TrimSuffix(m[2], "…")
				listed, found := false, false
				for sid, sp := range spans {
					if strings.HasPrefix(sid, id) {
						listed = true
						found = found || (at >= sp.from && at <= sp.to)
					}
				}
				if !listed {
					continue // a session past the text's list
				}
				if !found {
					t.Errorf("%q: +%vs is outside the span of every session %q…", line, at, id)
				}
				checked++
			}
			if name == "violations" && checked < 10 {
				t.Errorf("%d problem offsets checked, want many:\n%s", checked, text)
			}
		})
	}
}
