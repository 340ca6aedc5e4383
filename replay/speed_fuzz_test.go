package replay

import (
	"testing"
	"time"
)

// FuzzParseSpeed: a --speed value is accepted only as max (0) or a number
// from MinSpeed to MaxSpeed (no NaN, no infinity), and ScaleGap of any
// recorded gap at an accepted speed never turns a wait negative.
func FuzzParseSpeed(f *testing.F) {
	for _, s := range []string{"max", "1", "0.001", "1e9", "NaN", "Inf", "-1", "0", "1e-3", "0x1p-3", "1_0"} {
		f.Add(s, int64(time.Second))
	}
	f.Fuzz(func(t *testing.T, s string, gap int64) {
		v, err := ParseSpeed(s)
		if err != nil {
			return
		}
		if s == "max" {
			if v != 0 {
				t.Fatalf("max = %v, want 0", v)
			}
			return
		}
		if !(v >= MinSpeed && v <= MaxSpeed) {
			t.Fatalf("ParseSpeed(%q) = %v, outside %v..%v", s, v, MinSpeed, MaxSpeed)
		}
		if gap >= 0 && ScaleGap(gap, v) < 0 {
			t.Fatalf("ScaleGap(%d, %v) = %v, negative", gap, v, ScaleGap(gap, v))
		}
	})
}
