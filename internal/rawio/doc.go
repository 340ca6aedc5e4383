// Package rawio reads and writes non-blocking descriptors (pipes and
// sockets) with raw system calls, waiting in the Go runtime's poller when
// one is not ready.
//
// A read or write through package os or net is a system call the runtime
// is told about (entersyscall, exitsyscall). On the way in, that wakes the
// runtime's monitor thread (sysmon) whenever it sleeps because the
// process was idle, and the monitor then polls every 20 µs for a while. A
// proxy between one client and one server is idle between messages, so
// every message paid for that wake-up and the polling after it: on a
// 2-core machine, perf put about a sixth of the HTTP recording proxy's CPU
// per exchange there, and the stdio proxy's round trip was slower by as
// much. On a non-blocking descriptor a read or write never blocks, so the
// runtime need not be told: Read and Write here are raw calls on Linux
// (plain ones on other systems), Reader waits for readability in the
// poller as package os does, and Wrap gives a TCP connection whose Read
// and Write work that way.
package rawio
