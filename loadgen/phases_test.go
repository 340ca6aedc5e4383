package loadgen

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/replay"
)

// TestPhases: a run says how long it sent requests and how long it then
// waited for the answers in flight; the requests sent per second are over
// the sending, the ok ones over the whole measured duration. The bounds
// below come from the server's own sleep, not from how fast the machine is.
func TestPhases(t *testing.T) {
	t.Parallel()
	url := refHTTP(t, refserver.HTTPConfig{})
	calls := mustCalls(t, `tools/call sleep {"ms":400}`)
	t.Run("duration", func(t *testing.T) {
		t.Parallel()
		// arrivals at 0 and 0.25 s (the session set up before), the
		// second answered 0.4 s later: at least 0.15 s after the bound
		rep, err := Run(context.Background(), Target{URL: url}, calls, WithRate(4), WithDuration(500*time.Millisecond), WithTimeout(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if rep.Sending != 500*time.Millisecond || rep.Wait < 150*time.Millisecond || rep.Sending+rep.Wait != rep.Duration {
			t.Fatalf("sending %v, wait %v, duration %v: want 500ms, at least 150ms, their sum", rep.Sending, rep.Wait, rep.Duration)
		}
		var b strings.Builder
		if err := rep.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		sent := fmt.Sprintf("%d sent (%.1f/s)", rep.Requests, float64(rep.Requests)/0.5)
		ok := fmt.Sprintf("%d ok (100.00%%, %.1f/s)", rep.OK, float64(rep.OK)/rep.Duration.Seconds())
		for _, want := range []string{"duration  " + rep.Duration.Round(time.Millisecond).String() + ": 500ms sending, " + dur3(rep.Wait) + " waiting for the answers in flight",
			sent, ok} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("text lacks %q:\n%s", want, b.String())
			}
		}
	})
	t.Run("requests", func(t *testing.T) {
		t.Parallel()
		// the last of 2 requests is sent at about 0.4 s and answered 0.4 s later
		rep, err := Run(context.Background(), Target{URL: url}, calls, WithRequests(2), WithTimeout(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		if rep.Requests != 2 || rep.Sending < 350*time.Millisecond || rep.Wait < 350*time.Millisecond || rep.Setup+rep.Sending+rep.Wait != rep.Duration {
			t.Fatalf("%d sent; setup %v, sending %v, wait %v, duration %v", rep.Requests, rep.Setup, rep.Sending, rep.Wait, rep.Duration)
		}
	})
}

// TestTapeEndsAtItsLastAnswer: a tape-driven load ends a session once its
// last answer came, without waiting for a server message recorded after
// it (replay's settle margin, 2 s, when the live server does not send
// it): a 3 s run took 5 s. The report says where the time went: the
// closing after the measured end stays well below that margin.
func TestTapeEndsAtItsLastAnswer(t *testing.T) {
	t.Parallel()
	s := pingsThenNote(3)
	rep, err := RunTape(context.Background(), Target{URL: refHTTP(t, refserver.HTTPConfig{})}, []*replay.Session{s}, 1,
		[]replay.Option{replay.WithMaxSpeed()}, WithTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Requests != 3 || rep.OK != 3 || rep.Sending <= 0 || rep.Sending+rep.Wait != rep.Duration || rep.Closing >= replay.DefaultSettle/2 {
		t.Errorf("%d sent, %d ok; sending %v, wait %v, duration %v, closing %v (the settle margin is %v)",
			rep.Requests, rep.OK, rep.Sending, rep.Wait, rep.Duration, rep.Closing, replay.DefaultSettle)
	}
}

// pingsThenNote is pingSession(n, 1ms) with a notification recorded
// 10 ms after the last answer.
func pingsThenNote(n int) *replay.Session {
	s := pingSession(n, time.Millisecond)
	last := s.Server[len(s.Server)-1].Time
	note := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"bye"}}`
	s.Server = append(s.Server, replay.ServerMsg{Frame: []byte(note), Kind: jsonrpc.KindNotification, Method: "notifications/message",
		Time: last + int64(10*time.Millisecond), After: len(s.Steps), Answer: -1})
	return s
}

// TestPhasesMerge: the phases survive JSON, merge into the span of the
// sendings and the wait after them, and a report written before them
// counts its whole duration as sending (no phases in its text).
func TestPhasesMerge(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	a := &Report{Format: ReportFormat, Model: "closed", Generators: 1, Started: start, Ended: start.Add(3500 * time.Millisecond),
		Duration: 3500 * time.Millisecond, Sending: 3 * time.Second, Wait: 500 * time.Millisecond, Closing: time.Second, Errors: []ErrorCount{}}
	b := &Report{Format: ReportFormat, Model: "closed", Generators: 1, Started: start.Add(time.Second), Ended: start.Add(4200 * time.Millisecond),
		Duration: 3200 * time.Millisecond, Sending: 3 * time.Second, Wait: 200 * time.Millisecond, Errors: []ErrorCount{}}
	back := roundTrip(t, a)
	if back.Sending != a.Sending || back.Wait != a.Wait || back.Closing != a.Closing {
		t.Errorf("JSON: sending %v, wait %v, closing %v", back.Sending, back.Wait, back.Closing)
	}
	m, err := Merge(back, b)
	if err != nil {
		t.Fatal(err)
	}
	if m.Duration != 4200*time.Millisecond || m.Sending != 4*time.Second || m.Wait != 200*time.Millisecond || m.Closing != time.Second {
		t.Errorf("merged: duration %v, sending %v, wait %v, closing %v", m.Duration, m.Sending, m.Wait, m.Closing)
	}
	old := &Report{Format: ReportFormat, Model: "closed", Duration: 2 * time.Second, Requests: 10, OK: 10}
	if old.SendingTime() != old.Duration || old.PhaseText() != "2s" || !strings.Contains(old.CountLines(true)[0], "10 sent (5.0/s)") {
		t.Errorf("old report: sending %v, %q, %q", old.SendingTime(), old.PhaseText(), old.CountLines(true)[0])
	}
}

// TestPhasesSetup: in the closed model the sessions' setup (here a
// scenario setup step of 400 ms after the handshake) is a phase of its
// own, before the sending: the requests sent per second are over the
// time requests were sent, and the ok ones over the sending and the wait,
// not over the setup too (20 quick calls in 5 ms read 50/s when the setup
// counted as sending). JSON setup_ns carries it.
func TestPhasesSetup(t *testing.T) {
	t.Parallel()
	url := refHTTP(t, refserver.HTTPConfig{})
	rep, err := Run(context.Background(), Target{URL: url}, mustCalls(t, `tools/call echo {"message":"x"}`),
		WithRequests(20), WithSetupCalls(mustCalls(t, `tools/call sleep {"ms":400}`)), WithTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var phases struct {
		Duration int64 `json:"duration_ns"`
		Setup    int64 `json:"setup_ns"`
		Sending  int64 `json:"sending_ns"`
		Wait     int64 `json:"wait_ns"`
	}
	if err := json.Unmarshal(js.Bytes(), &phases); err != nil {
		t.Fatal(err)
	}
	setup, sending := time.Duration(phases.Setup), time.Duration(phases.Sending)
	if rep.Requests != 20 || setup < 400*time.Millisecond || sending >= 300*time.Millisecond ||
		phases.Setup+phases.Sending+phases.Wait != phases.Duration {
		t.Fatalf("%d sent; setup %v, sending %v, wait %v, duration %v: want the 400 ms setup apart, the sum the duration",
			rep.Requests, setup, sending, time.Duration(phases.Wait), time.Duration(phases.Duration))
	}
	var b strings.Builder
	if err := rep.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	answering := time.Duration(phases.Duration - phases.Setup)
	for _, want := range []string{": " + dur3(setup) + " setting up, " + dur3(sending) + " sending, ",
		fmt.Sprintf("20 sent (%.1f/s): 20 ok (100.00%%, %.1f/s)", 20/sending.Seconds(), 20/answering.Seconds())} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}

// TestPhasesMergeSetup: merged reports set up from the earliest start to
// the earliest first request and send from there to the latest end of a
// sending; a report written before the setup was a phase (no setup_ns)
// reads and merges as before, its setup in its sending.
func TestPhasesMergeSetup(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	a := &Report{Format: ReportFormat, Model: "closed", Generators: 1, Started: start, Ended: start.Add(3500 * time.Millisecond),
		Duration: 3500 * time.Millisecond, Setup: 500 * time.Millisecond, Sending: 2500 * time.Millisecond, Wait: 500 * time.Millisecond, Errors: []ErrorCount{}}
	back := roundTrip(t, a)
	if back.Setup != a.Setup || back.Sending != a.Sending || back.Wait != a.Wait {
		t.Errorf("JSON: setup %v, sending %v, wait %v", back.Setup, back.Sending, back.Wait)
	}
	b := &Report{Format: ReportFormat, Model: "closed", Generators: 1, Started: start.Add(time.Second), Ended: start.Add(4200 * time.Millisecond),
		Duration: 3200 * time.Millisecond, Setup: 200 * time.Millisecond, Sending: 2800 * time.Millisecond, Wait: 200 * time.Millisecond, Errors: []ErrorCount{}}
	m, err := Merge(back, b)
	if err != nil {
		t.Fatal(err)
	}
	if m.Duration != 4200*time.Millisecond || m.Setup != 500*time.Millisecond || m.Sending != 3500*time.Millisecond || m.Wait != 200*time.Millisecond {
		t.Errorf("merged: duration %v, setup %v, sending %v, wait %v", m.Duration, m.Setup, m.Sending, m.Wait)
	}
	// An older report: its JSON has no setup_ns.
	var old bytes.Buffer
	if err := b.WriteJSON(&old); err != nil {
		t.Fatal(err)
	}
	oldJSON := strings.Replace(old.String(), `"setup_ns": 200000000,`, "", 1)
	if oldJSON == old.String() {
		t.Fatalf("no setup_ns in %s", old.String())
	}
	ob, err := ReadReport(strings.NewReader(oldJSON))
	if err != nil {
		t.Fatal(err)
	}
	ob.Sending += 200 * time.Millisecond // as written then: the setup in the sending
	m, err = Merge(ob, ob)
	if err != nil {
		t.Fatal(err)
	}
	if m.Setup != 0 || m.Sending != 3*time.Second || m.Wait != 200*time.Millisecond || !strings.HasPrefix(m.PhaseText(), "3.2s: 3s sending, ") {
		t.Errorf("merged older reports: setup %v, sending %v, wait %v, %q", m.Setup, m.Sending, m.Wait, m.PhaseText())
	}
}

// roundTrip writes rep as JSON and reads it back.
func roundTrip(t *testing.T, rep *Report) *Report {
	t.Helper()
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := ReadReport(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return back
}
