package main

// The signals that stop a command, and the exit codes they map to. main
// turns a shutdown signal into the cancellation of the commands' context,
// its cause naming the signal.

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcptape/mcptape/internal/proc"
)

// shutdownSignals are the signals that stop a command cleanly: Ctrl-C
// (SIGINT; on Windows also Ctrl-Break), SIGTERM (on Windows also the
// console's close, logoff and shutdown events) and SIGHUP (the terminal
// went away). Windows never delivers SIGHUP, but its syscall package
// defines it, so one list serves every system.
func shutdownSignals() []os.Signal {
	return []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}
}

// signalCause is the cause of a context cancelled by a shutdown signal.
type signalCause struct{ sig os.Signal }

func (c *signalCause) Error() string { return "interrupted by " + signalName(c.sig) }

// signalName names s as the tape and the messages do ("SIGTERM").
func signalName(s os.Signal) string {
	if sig, ok := s.(syscall.Signal); ok {
		return proc.SignalName(sig)
	}
	return s.String()
}

// notifyShutdown returns a copy of parent that ends at the first shutdown
// signal, with a *signalCause as its cause (see interruptedCode). stop
// releases the signals.
func notifyShutdown(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, shutdownSignals()...)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sigs:
			cancel(&signalCause{s})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// exitInterrupted is the exit code of a command that an ended context
// interrupted when no signal ended it (a caller running it in-process):
// 128 + SIGINT, as for Ctrl-C.
const exitInterrupted = 130

// interruptedCode returns the exit code of a command that the end of ctx
// interrupted: 128+N for signal N (130 SIGINT, 143 SIGTERM, 129 SIGHUP),
// as shells report a process that signal killed; exitInterrupted when no
// signal ended ctx.
func interruptedCode(ctx context.Context) int {
	var sc *signalCause
	if errors.As(context.Cause(ctx), &sc) {
		if sig, ok := sc.sig.(syscall.Signal); ok {
			return 128 + int(sig)
		}
	}
	return exitInterrupted
}

// interrupted is the error of a command that the end of ctx interrupted,
// with the exit code of interruptedCode: "interrupted by SIGTERM" (just
// "interrupted" when no signal ended ctx), then note.
func interrupted(ctx context.Context, note string) error {
	msg := "interrupted"
	var sc *signalCause
	if errors.As(context.Cause(ctx), &sc) {
		msg = sc.Error()
	}
	return withCode(interruptedCode(ctx), errors.New(msg+note))
}
