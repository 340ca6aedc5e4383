//go:build !race

package conformancetest

// raceEnabled says the test runs with -race, so the proxy is built with it too.
const raceEnabled = false
