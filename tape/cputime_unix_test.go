//go:build unix

package tape

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system) this process has used; a
// benchmark on a shared machine divides work by it as well as by wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
