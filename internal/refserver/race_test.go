//go:build race

package refserver

// raceEnabled reports whether the race detector is on: it makes the SDK's
// JSON handling of multi-megabyte frames tens of times slower.
const raceEnabled = true
