package main

// The signals that stop a command, and the exit codes they map to. main
// turns the first shutdown signal into the cancellation of the commands'
// context (its cause names the signal) and a second one into the end of
// the context stopNow returns, for the commands that drain on the first.

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
	"time"

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

// stopNowKey is the context key of the context stopNow returns.
type stopNowKey struct{}

// notifyShutdown returns a copy of parent that ends at the first shutdown
// signal, with a *signalCause as its cause (see interruptedCode), and
// carries a context that a second one ends (see stopNow). stop releases
// the signals.
func notifyShutdown(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	now, cancelNow := context.WithCancel(context.WithoutCancel(parent))
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, shutdownSignals()...)
	done := make(chan struct{})
	go func() {
		for n := 0; ; n++ {
			select {
			case s := <-sigs:
				if n == 0 {
					cancel(&signalCause{s})
				} else {
					cancelNow()
				}
			case <-done:
				return
			}
		}
	}()
	return withStopNow(ctx, now), func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
		cancelNow()
	}
}

// withStopNow returns ctx carrying now as the context stopNow returns.
func withStopNow(ctx, now context.Context) context.Context {
	return context.WithValue(ctx, stopNowKey{}, now)
}

// stopNow returns the context that ends when a command that stops
// gracefully once ctx ended (record's proxy drains its open exchanges)
// must stop at once: main ends it at the second shutdown signal. Without
// one (a command run in-process), it never ends.
func stopNow(ctx context.Context) context.Context {
	if now, ok := ctx.Value(stopNowKey{}).(context.Context); ok {
		return now
	}
	return context.Background()
}

// announceStop prints, when a shutdown signal ends ctx (main's
// notifyShutdown; not when a caller cancels it), the one line by which the
// commands that wait before they exit (record, load, replay) say so:
// "stopping: WAITING; a second Ctrl-C (or signal) SECOND". waiting is
// called then, with the signal, and returns what is waited for ("" when
// nothing is: no line). The returned function stops the announcement: a
// command calls it once it no longer waits.
func announceStop(ctx context.Context, logf func(string, ...any), second string, waiting func(sig os.Signal) string) (stop func() bool) {
	return context.AfterFunc(ctx, func() {
		var sc *signalCause
		if !errors.As(context.Cause(ctx), &sc) {
			return
		}
		if w := waiting(sc.sig); w != "" {
			logf("stopping: %s; a second Ctrl-C (or signal) %s", w, second)
		}
	})
}

// closingSessions is what load and replay wait for at the first signal:
// their sessions closed, each within two steps of grace.
func closingSessions(grace time.Duration) func(os.Signal) string {
	return func(os.Signal) string {
		return "closing the sessions, up to " + (2 * grace).String() + " (a stdio server's exit, an HTTP DELETE's answer)"
	}
}

// signalSettle is how long a command whose run failed waits for a
// shutdown signal before it calls the failure its own (settleSignal): a
// Ctrl-C reaches every process of the terminal's foreground group at
// once, and the server or proxy in that group it was talking to can die
// of it, and the command notice that death and end, before its own
// handler turns the signal into the end of its context (the runtime
// hands a signal over on a goroutine of its own, late on a loaded host).
const signalSettle = 250 * time.Millisecond

// settleSignal reports whether a shutdown signal ended ctx, waiting up to
// d for one when signals can end it (main's notifyShutdown; run
// in-process, nothing waits): a run that failed as the signal came is
// interrupted (128+N), not failed.
func settleSignal(ctx context.Context, d time.Duration) bool {
	if ctx.Err() != nil {
		return true
	}
	if _, ok := ctx.Value(stopNowKey{}).(context.Context); !ok {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return true
	case <-t.C:
		return false
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
