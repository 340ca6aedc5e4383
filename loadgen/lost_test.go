package loadgen

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/transport"
)

// TestRequestOnSessionLostAfterSetup: a session's connection may be lost
// (a stdio server exits, a legacy SSE stream ends) between a request's
// check that the session is up and its send, when the reader clears the
// session's connection. The request fails with the loss, as one sent on
// the lost connection does; it was sent on the cleared (nil) connection
// and panicked (TestStdioServerExit/restart under -race -cpu 1,2,4, where
// the session's other loops meet its server's exit). The loss is
// injected there, once, with the reader's own handling of a loss.
func TestRequestOnSessionLostAfterSetup(t *testing.T) {
	o, err := newOptions([]Option{WithSessions(1), WithRequests(2), WithTimeout(10 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if o.client, err = sharedClient(o, false); err != nil {
		t.Fatal(err)
	}
	why := fmt.Errorf("the server went away: %w", transport.ErrServerClosed)
	lose := true
	o.upHook = func(s *session) {
		if lose {
			lose = false
			s.mu.Lock()
			conn := s.conn
			s.mu.Unlock()
			s.lost(conn, why)
		}
	}
	r := &runner{o: o, target: Target{URL: refHTTP(t, refserver.HTTPConfig{JSONResponse: true})}, st: newStats(), work: context.Background(),
		picker: newPicker(mustCalls(t, `tools/call echo {"message":"hi"}`), frameSpec{version: o.version})}
	s := newSession(r, 0)
	defer s.close()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2 { // the first request meets the loss, the second a new setup
		s.do(context.Background(), r.picker.pick(rng), time.Now(), nil, rng)
	}
	now := time.Now()
	rep := r.report(now, now)
	if rep.Requests != 2 || rep.Answered != 1 || rep.Setups != 2 || rep.RequestErrors != 1 || errorCount(rep, ClassTransport) != 1 {
		t.Errorf("sent %d answered %d setups %d errors %v: want the first request failed with the loss, the second answered after a new setup",
			rep.Requests, rep.Answered, rep.Setups, rep.Errors)
	}
}

// TestSetupAgainWhileRegistering: a session's loops share it; one may set
// it up again (after a loss) while another registers a request. The
// session's laziness was written by every setup and read by registerOne
// after its lock (TestStdioServerExit/restart under -race, in CI): it is
// now fixed when the session is made. Under -race the old code fails
// here every time: the setup's write follows the registration's unlock,
// and the registration's read of it is ordered with neither.
func TestSetupAgainWhileRegistering(t *testing.T) {
	o, err := newOptions([]Option{WithSessions(1), WithRequests(1), WithTimeout(10 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if o.client, err = sharedClient(o, false); err != nil {
		t.Fatal(err)
	}
	r := &runner{o: o, target: Target{URL: refHTTP(t, refserver.HTTPConfig{JSONResponse: true})}, st: newStats(), work: context.Background(),
		picker: newPicker(mustCalls(t, "ping"), frameSpec{version: o.version})}
	s := newSession(r, 0)
	defer s.close()
	conn, err := s.ensure(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	const id = 1 << 40 // never sent
	set := make(chan error, 1)
	go func() { // another loop: once the registration is in, the session is lost and set up again
		for {
			s.mu.Lock()
			in := s.pending[id] != nil
			s.mu.Unlock()
			if in {
				break
			}
			time.Sleep(time.Millisecond)
		}
		s.lost(conn, fmt.Errorf("the server went away: %w", transport.ErrServerClosed))
		_, err := s.ensure(context.Background())
		set <- err
	}()
	if drain := s.registerOne(conn, &call{done: make(chan reply, 1)}, id); !drain {
		t.Error("registerOne on a Streamable HTTP session without a GET stream: want a lazy session (drain)")
	}
	if err := <-set; err != nil {
		t.Fatalf("set up again: %v", err)
	}
	if !s.lazy {
		t.Error("the session set up again is no longer lazy")
	}
}
