//go:build unix

package capture

import (
	"syscall"
	"time"
)

// selfCPU returns the CPU time (user and system) this process used so far.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
