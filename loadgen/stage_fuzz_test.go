package loadgen

import (
	"math"
	"testing"
)

// FuzzParseStage: a --stage or --rate value is accepted only with a
// positive duration and a finite target in range, and a stage written
// back (Stage.String) parses to the same stage. An accepted rate's next
// arrival is never before the previous one (the schedule cannot run
// backwards, as it did when an arrival overflowed time.Duration).
func FuzzParseStage(f *testing.F) {
	for _, s := range []string{"30s:100/s", "1m:50", "1s:0/s", "1h:600/m", "2s:1e-12/s", "1s:NaN/s", "5s:1e7/s", "1ns:1000000"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		if r, err := ParseRate(spec); err == nil {
			if !(r > 0 && r <= 1e7) {
				t.Fatalf("ParseRate(%q) = %v, outside (0, 1e7]", spec, r)
			}
			p := profile{{0, r, r}}
			a0, _ := p.arrival(0)
			a1, ok := p.arrival(1)
			if !ok || a1 < a0 {
				t.Fatalf("rate %v: arrival 1 at %v, before arrival 0 at %v", r, a1, a0)
			}
		}
		s, err := ParseStage(spec)
		if err != nil {
			return
		}
		if s.Duration <= 0 || math.IsNaN(s.Target) || s.Target < 0 || s.Target > 1e7 || (!s.Rate && s.Target != math.Trunc(s.Target)) {
			t.Fatalf("ParseStage(%q) = %+v", spec, s)
		}
		again, err := ParseStage(s.String())
		if err != nil || again != s {
			t.Fatalf("ParseStage(%q) = %+v, written %q, read back %+v, %v", spec, s, s.String(), again, err)
		}
	})
}
