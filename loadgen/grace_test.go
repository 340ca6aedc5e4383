package loadgen

import (
	"context"
	"testing"
	"time"

	"github.com/mcptape/mcptape/transport"
)

// TestGrace: WithGrace sets the wait between the steps of a stdio server's
// shutdown at the end of the run. A server that ignores the end of its
// stdin and SIGTERM is killed after two graces; with the default grace
// (transport.DefaultGrace, 2s) that alone would take 4s. The report's
// closing phase is that shutdown: at least the two graces waited, and
// less than the default's two, which a grace not applied would take
// however fast the machine (the run's start, slow on a loaded machine, is
// not in it).
func TestGrace(t *testing.T) {
	if _, err := Run(context.Background(), fakeTarget(t, "linger"), mustCalls(t, "tools/list"), WithGrace(-time.Second)); err == nil {
		t.Error("WithGrace(-1s) accepted")
	}
	const grace = 100 * time.Millisecond
	rep, err := Run(context.Background(), fakeTarget(t, "linger"), mustCalls(t, "tools/list"),
		WithRequests(3), WithTimeout(time.Minute), WithGrace(grace))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Answered != 3 {
		t.Errorf("answered %d of 3", rep.Answered)
	}
	if rep.Closing < 2*grace || rep.Closing >= 2*transport.DefaultGrace {
		t.Errorf("closing took %v: want the server stopped after two %v graces (%v), not the default's (%v)",
			rep.Closing, grace, 2*grace, 2*transport.DefaultGrace)
	}
}
