package loadgen

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/replay"
)

// TestRealPeerPhases runs against the TypeScript server-everything over
// Streamable HTTP: an open-model run of calls that last a second sends
// for its duration exactly, then waits for the answers in flight, and
// its last live figures count the requests as its report does; a
// tape-driven run of pings whose recording has a notification after the
// last answer, which this server never sends, ends at its last answer.
func TestRealPeerPhases(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real peer")
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	url := peertest.EverythingHTTP(t, ctx).URL
	var lr lastLive
	// arrivals at 0, 0.25, 0.5 and 0.75 s, each answered 1 s or more later
	rep, err := Run(ctx, Target{URL: url}, mustCalls(t, `tools/call trigger-long-running-operation {"duration":1,"steps":1}`),
		WithRate(4), WithDuration(time.Second), WithTimeout(20*time.Second), lr.option())
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK != 4 || rep.Sending != time.Second || rep.Wait < 700*time.Millisecond || rep.Sending+rep.Wait != rep.Duration {
		t.Errorf("%d ok of %d; sending %v, wait %v, duration %v", rep.OK, rep.Requests, rep.Sending, rep.Wait, rep.Duration)
	}
	if last := lr.get(); last.OK != rep.OK || last.ErrorAnswers != rep.ErrorAnswers || last.NoAnswer != rep.NoAnswer {
		t.Errorf("last live figures %+v; report %d ok, %d error answers, %d no answer", last, rep.OK, rep.ErrorAnswers, rep.NoAnswer)
	}

	tr, err := RunTape(ctx, Target{URL: url}, []*replay.Session{pingsThenNote(5)}, 2, []replay.Option{replay.WithMaxSpeed()}, WithTimeout(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if tr.OK != 10 || tr.Closing >= replay.DefaultSettle/2 || tr.Sending+tr.Wait != tr.Duration {
		t.Errorf("tape: %d ok of %d; sending %v, wait %v, closing %v; warnings %v", tr.OK, tr.Requests, tr.Sending, tr.Wait, tr.Closing, tr.Warnings)
	}
}

// TestRealPeerSetupPhase runs the closed model against the TypeScript
// server-everything over stdio, whose start and handshake take far
// longer than 100 echo calls: that setup is its own phase, not in the
// sending over which the requests sent per second are counted.
func TestRealPeerSetupPhase(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real peer")
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	argv := append(peertest.ServerEverything(t), "stdio")
	rep, err := Run(ctx, Target{Command: argv}, mustCalls(t, `tools/call echo {"message":"x"}`),
		WithRequests(100), WithTimeout(20*time.Second), WithServerStderr(io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK != 100 || rep.Setup <= rep.Sending || rep.Setup+rep.Sending+rep.Wait != rep.Duration {
		t.Errorf("%d ok of %d; setup %v, sending %v, wait %v, duration %v: want a setup longer than the sending, the sum the duration",
			rep.OK, rep.Requests, rep.Setup, rep.Sending, rep.Wait, rep.Duration)
	}
}
