package main

// The signals that stop a command.

import (
	"os"
	"syscall"
)

// shutdownSignals are the signals that stop a command cleanly: Ctrl-C
// (SIGINT; on Windows also Ctrl-Break), SIGTERM (on Windows also the
// console's close, logoff and shutdown events) and SIGHUP (the terminal
// went away). Windows never delivers SIGHUP, but its syscall package
// defines it, so one list serves every system.
func shutdownSignals() []os.Signal {
	return []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}
}
