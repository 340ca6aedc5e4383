//go:build !race

package capture

// raceEnabled reports whether the race detector is on: sync.Pool then
// drops a share of what is put back, so allocation counts mean nothing.
const raceEnabled = false
