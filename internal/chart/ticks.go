// Package chart holds the small pieces of arithmetic the HTML reports'
// inline SVG charts share: round tick steps for their axes.
package chart

import "math"

// NiceStep returns a round step (1, 2 or 5 times a power of ten) that
// cuts a span of total into about n ticks; 1 for an empty span.
func NiceStep(total float64, n int) float64 {
	if total <= 0 || n <= 0 {
		return 1
	}
	raw := total / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}
