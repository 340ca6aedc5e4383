// Package benchturns measures two ways of doing the same thing side by
// side in one benchmark, taking turns in rounds so that a burst of load
// on a shared machine does not land on one of them only.
package benchturns

import (
	"testing"
	"time"
)

// Rounds is how many turns each side takes.
const Rounds = 10

// Run calls ours and baseline (each reporting success) b.N times each,
// in Rounds alternating rounds, and reports the time per call of each
// ("ours-ns/"+what, "baseline-ns/"+what) and their ratio, ours over the
// baseline. A call that reports failure fails the benchmark.
func Run(b *testing.B, what string, ours, baseline func() bool) {
	b.Helper()
	funcs := [2]func() bool{ours, baseline}
	var took [2]time.Duration
	per := max(b.N/Rounds, 1)
	b.ReportAllocs()
	b.ResetTimer()
	for r := range Rounds {
		for k := range funcs {
			k = (k + r) % len(funcs)
			t0 := time.Now()
			for range per {
				if !funcs[k]() {
					b.Fatalf("%s: a call failed", what)
				}
			}
			took[k] += time.Since(t0)
		}
	}
	n := float64(per * Rounds)
	b.ReportMetric(float64(took[0].Nanoseconds())/n, "ours-ns/"+what)
	b.ReportMetric(float64(took[1].Nanoseconds())/n, "baseline-ns/"+what)
	b.ReportMetric(float64(took[0])/float64(took[1]), "ratio")
}
