package main

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestInterruptedCode checks the exit code and message of a command
// interrupted by each shutdown signal, and by a context no signal ended
// (a caller running the command in-process).
func TestInterruptedCode(t *testing.T) {
	tests := []struct {
		sig  os.Signal // nil: cancelled with no signal
		code int
		msg  string
	}{
		{os.Interrupt, 130, "interrupted by SIGINT: partial"},
		{syscall.SIGTERM, 143, "interrupted by SIGTERM: partial"},
		{syscall.SIGHUP, 129, "interrupted by SIGHUP: partial"},
		{nil, exitInterrupted, "interrupted: partial"},
	}
	for _, tt := range tests {
		ctx, cancel := context.WithCancelCause(context.Background())
		if tt.sig != nil {
			cancel(&signalCause{tt.sig})
		} else {
			cancel(nil)
		}
		if code := interruptedCode(ctx); code != tt.code {
			t.Errorf("%v: code %d, want %d", tt.sig, code, tt.code)
		}
		err := interrupted(ctx, ": partial")
		if code := exitCodeOf(err); code != tt.code || err.Error() != tt.msg {
			t.Errorf("%v: error %q (exit %d), want %q (exit %d)", tt.sig, err, code, tt.msg, tt.code)
		}
	}
}

// exitCodeOf is the exit code main gives err.
func exitCodeOf(err error) int {
	if ee, ok := err.(*exitError); ok {
		return ee.code
	}
	return 1
}

// TestSettleSignal: a failed run waits for a signal only where signals
// can end its context (main's), and no longer than asked; one that comes
// meanwhile is seen.
func TestSettleSignal(t *testing.T) {
	if settleSignal(context.Background(), time.Hour) {
		t.Error("in-process context: true, want false at once")
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	sctx := withStopNow(ctx, context.Background())
	start := time.Now()
	if settleSignal(sctx, 30*time.Millisecond) || time.Since(start) < 30*time.Millisecond {
		t.Errorf("no signal: true or returned after %v; want false after 30ms", time.Since(start))
	}
	time.AfterFunc(20*time.Millisecond, func() { cancel(&signalCause{syscall.SIGINT}) })
	if !settleSignal(sctx, time.Minute) || interruptedCode(sctx) != 130 {
		t.Errorf("signal 20 ms later: not seen, or code %d; want it seen, 130", interruptedCode(sctx))
	}
}
