package main

import (
	"os"
	"runtime/debug"
)

// tuneGC sets the garbage collector's target percentage (GOGC) for a
// command whose live heap stays small, unless the environment sets GOGC:
// a value the user chose wins. It returns the function that puts the
// previous percentage back (a no-op when nothing was changed).
func tuneGC(percent int) (restore func()) {
	if os.Getenv("GOGC") != "" {
		return func() {}
	}
	old := debug.SetGCPercent(percent)
	return func() { debug.SetGCPercent(old) }
}
