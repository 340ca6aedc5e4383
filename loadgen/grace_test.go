package loadgen

import (
	"context"
	"testing"
	"time"
)

// TestGrace: WithGrace sets the wait between the steps of a stdio server's
// shutdown at the end of the run. A server that ignores the end of its
// stdin and SIGTERM is killed after two graces; with the default grace
// (transport.DefaultGrace, 2s) that alone would take 4s.
func TestGrace(t *testing.T) {
	if _, err := Run(context.Background(), fakeTarget(t, "linger"), mustCalls(t, "tools/list"), WithGrace(-time.Second)); err == nil {
		t.Error("WithGrace(-1s) accepted")
	}
	start := time.Now()
	rep, err := Run(context.Background(), fakeTarget(t, "linger"), mustCalls(t, "tools/list"),
		WithRequests(3), WithTimeout(time.Minute), WithGrace(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Answered != 3 {
		t.Errorf("answered %d of 3", rep.Answered)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("run took %v: the server was not stopped after two 100ms graces", took)
	}
}
