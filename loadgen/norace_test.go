//go:build !race

package loadgen

// raceEnabled reports whether the race detector is on: it makes sync.Pool
// drop some of what it is given, so allocation counts do not hold then.
const raceEnabled = false
