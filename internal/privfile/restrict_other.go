//go:build !windows

package privfile

import "os"

// restrict sets f's mode to Mode.
func restrict(f *os.File) error { return f.Chmod(Mode) }
