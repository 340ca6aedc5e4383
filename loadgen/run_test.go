package loadgen

import (
	"context"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/refserver"
)

// TestExactCounts runs closed and open models over every transport against
// the reference server with a request bound, and checks every count.
func TestExactCounts(t *testing.T) {
	type tc struct {
		name     string
		target   func(t *testing.T) Target
		opts     []Option
		sessions int
		version  string
	}
	httpT := func(cfg refserver.HTTPConfig) func(t *testing.T) Target {
		return func(t *testing.T) Target { return Target{URL: refHTTP(t, cfg)} }
	}
	cases := []tc{
		{name: "http sse closed", target: httpT(refserver.HTTPConfig{}), sessions: 4, opts: []Option{WithInFlight(3)}},
		{name: "http json closed", target: httpT(refserver.HTTPConfig{JSONResponse: true}), sessions: 3},
		{name: "http json open", target: httpT(refserver.HTTPConfig{JSONResponse: true}), sessions: 5, opts: []Option{WithRate(2000)}},
		{name: "http stateless 2026", target: httpT(refserver.HTTPConfig{Stateless: true, JSONResponse: true}), sessions: 2, version: "2026-07-28"},
		{name: "stdio closed inflight", target: stdioTarget, sessions: 2, opts: []Option{WithInFlight(4)}},
		{name: "stdio open", target: stdioTarget, sessions: 2, opts: []Option{WithRate(1000)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			const n = 120
			calls := mustCalls(t, `3:tools/call echo {"message":"hi"}`, `tools/call add {"a":1,"b":2}`, `tools/list`)
			opts := append([]Option{WithSessions(c.sessions), WithRequests(n), WithTimeout(10 * time.Second)}, c.opts...)
			if c.version != "" {
				opts = append(opts, WithProtocolVersion(c.version))
			}
			rep, err := Run(context.Background(), c.target(t), calls, opts...)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Requests != n || rep.Answered != n || rep.ErrorTotal != 0 || rep.Dropped != 0 {
				t.Fatalf("requests %d answered %d errors %v dropped %d, want %d %d none 0", rep.Requests, rep.Answered, rep.Errors, rep.Dropped, n, n)
			}
			wantSetups := int64(c.sessions) // initialize, or server/discover from 2026-07-28
			if rep.Setups != wantSetups {
				t.Errorf("setups %d, want %d", rep.Setups, wantSetups)
			}
			var sum int64
			for _, name := range []string{"tools/call", "tools/list"} {
				s := rep.Find(name)
				if s == nil {
					t.Fatalf("no series %q in %+v", name, rep.Series)
				}
				sum += s.Count
			}
			echo, add := rep.Find("tools/call echo"), rep.Find("tools/call add")
			if sum != n || echo == nil || add == nil || echo.Count+add.Count != rep.Find("tools/call").Count {
				t.Fatalf("series counts do not add up: %+v", rep.Series)
			}
			if echo.Count <= add.Count {
				t.Errorf("weight 3 echo %d not above add %d", echo.Count, add.Count)
			}
			if s := rep.Find(SetupSeries); (s != nil) != (wantSetups > 0) || (s != nil && s.Count != wantSetups) {
				t.Errorf("setup series %+v, want %d", s, wantSetups)
			}
			if echo.P50 <= 0 || echo.P99 < echo.P50 || echo.Max < echo.P99 {
				t.Errorf("percentiles out of order: %+v", echo)
			}
		})
	}
}

// TestErrorClasses checks that tool errors, JSON-RPC errors and timeouts
// are each counted in their class.
func TestErrorClasses(t *testing.T) {
	url := refHTTP(t, refserver.HTTPConfig{JSONResponse: true})
	calls := mustCalls(t, `tools/call fail {"mode":"tool"}`, `tools/call fail {"mode":"rpc"}`, `nosuch/method`, `tools/call sleep {"ms":2000}`)
	rep, err := Run(context.Background(), Target{URL: url}, calls, WithSessions(4), WithRequests(40), WithTimeout(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	for _, class := range []string{ClassTool, ClassJSONRPC, ClassTimeout} {
		if errorCount(rep, class) == 0 {
			t.Errorf("no %s errors in %+v", class, rep.Errors)
		}
	}
	if rep.ErrorTotal != rep.Requests {
		t.Errorf("%d errors for %d requests, every call here fails", rep.ErrorTotal, rep.Requests)
	}
}

// TestDuration checks a duration-bounded run stops on time.
func TestDuration(t *testing.T) {
	url := refHTTP(t, refserver.HTTPConfig{JSONResponse: true})
	start := time.Now()
	rep, err := Run(context.Background(), Target{URL: url}, mustCalls(t, `ping`), WithSessions(2), WithDuration(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("run took %v", el)
	}
	if rep.Answered == 0 || rep.Duration < 300*time.Millisecond || rep.Duration > 2*time.Second {
		t.Errorf("answered %d in %v", rep.Answered, rep.Duration)
	}
}

// TestInterrupt checks that cancelling the context ends the run with a
// report.
func TestInterrupt(t *testing.T) {
	url := refHTTP(t, refserver.HTTPConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	rep, err := Run(ctx, Target{URL: url}, mustCalls(t, `tools/call sleep {"ms":100}`), WithSessions(3), WithDuration(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Interrupted || rep.Answered == 0 || rep.ErrorTotal != 0 {
		t.Errorf("interrupted %v answered %d errors %v", rep.Interrupted, rep.Answered, rep.Errors)
	}
}

// TestDueRamp checks the open model's schedule: the rate grows linearly
// over the ramp (half the arrivals of full rate), then stays.
func TestDueRamp(t *testing.T) {
	cases := []struct {
		rate float64
		ramp time.Duration
		k    uint64
		want time.Duration
	}{
		{100, 0, 0, 0},
		{100, 0, 100, time.Second},
		{100, time.Second, 50, time.Second},                 // 50 arrivals in the 1 s ramp
		{100, time.Second, 150, 2 * time.Second},            // then 100/s
		{100, time.Second, 0, 0},                            //
		{100, time.Second, 25, 707106781 * time.Nanosecond}, // sqrt(0.5) s
	}
	for _, c := range cases {
		r := &runner{o: &options{rate: c.rate, ramp: c.ramp}}
		if got := r.due(c.k); got-c.want > time.Microsecond || c.want-got > time.Microsecond {
			t.Errorf("rate %v ramp %v: arrival %d due at %v, want %v", c.rate, c.ramp, c.k, got, c.want)
		}
	}
}

// TestClosedRamp starts 4 sessions over 400 ms: the last setup starts
// about 300 ms after the first.
func TestClosedRamp(t *testing.T) {
	url := refHTTP(t, refserver.HTTPConfig{JSONResponse: true})
	start := time.Now()
	rep, err := Run(context.Background(), Target{URL: url}, mustCalls(t, `ping`), WithSessions(4), WithRamp(400*time.Millisecond),
		WithDuration(500*time.Millisecond), WithThink(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Setups != 4 || time.Since(start) < 400*time.Millisecond {
		t.Fatalf("setups %d in %v", rep.Setups, time.Since(start))
	}
}
