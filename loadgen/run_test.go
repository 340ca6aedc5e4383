package loadgen

import (
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/transport"
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
	t.Parallel() // waits on the server, sleeps and back-offs; no other test's state
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

// TestDuration checks a duration-bounded run stops on time: it cannot end
// before the duration, and after it, only the requests already sent (or a
// setup still going) may keep it going.
func TestDuration(t *testing.T) {
	const d = 300 * time.Millisecond
	url := refHTTP(t, refserver.HTTPConfig{JSONResponse: true})
	rep, err := Run(context.Background(), Target{URL: url}, mustCalls(t, `ping`), WithSessions(2), WithDuration(d))
	if err != nil {
		t.Fatal(err)
	}
	ping, setup := rep.Find("ping"), rep.Find(SetupSeries)
	if rep.Answered == 0 || ping == nil || setup == nil || rep.Duration < d {
		t.Fatalf("answered %d in %v", rep.Answered, rep.Duration)
	}
	// the last request started before d; a setup may end after it
	if limit := max(d+ping.Max, setup.Max) + time.Second; rep.Duration > limit {
		t.Errorf("run took %v, beyond %v (ping max %v, setup max %v)", rep.Duration, limit, ping.Max, setup.Max)
	}
}

// TestInterrupt checks that cancelling the context ends the run with a
// report of what was measured, the requests then in flight counted as
// cancelled ("interrupted"), in their series. The context is cancelled
// once three calls were answered (seen through WithLive), not after a
// fixed time, so the report has answers even when setting up is slow.
func TestInterrupt(t *testing.T) {
	url := refHTTP(t, refserver.HTTPConfig{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rep, err := Run(ctx, Target{URL: url}, mustCalls(t, `tools/call sleep {"ms":100}`), WithSessions(3), WithDuration(time.Hour),
		WithLive(5*time.Millisecond, func(l Live) {
			if l.Answered >= 3 {
				cancel()
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	// each session has at most one request in flight: cancelled, counted
	inflight := rep.Requests - rep.Answered
	cancelled := errorDetail(rep, ClassCancelled, "interrupted")
	if !rep.Interrupted || rep.Answered < 3 || inflight > 3 || cancelled != inflight || rep.ErrorTotal != cancelled {
		t.Errorf("interrupted %v sent %d answered %d errors %v", rep.Interrupted, rep.Requests, rep.Answered, rep.Errors)
	}
	if s := rep.Find("tools/call sleep"); s == nil || s.Errors != cancelled || s.Requests != rep.Requests {
		t.Errorf("series %+v: want the %d cancelled of %d requests", s, cancelled, rep.Requests)
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
		o := &options{rate: c.rate, ramp: c.ramp}
		if got, _ := o.profile().arrival(float64(c.k)); got-c.want > time.Microsecond || c.want-got > time.Microsecond {
			t.Errorf("rate %v ramp %v: arrival %d due at %v, want %v", c.rate, c.ramp, c.k, got, c.want)
		}
	}
}

// TestClosedRamp starts 4 sessions over 400 ms: session i may not start
// before i*100 ms. The server notes when each initialize arrives; as every
// session's start is only ever delayed, the i-th arrival (in time order)
// comes at least i*100 ms after the run started, however loaded the
// machine (without the ramp all four would come at once).
func TestClosedRamp(t *testing.T) {
	const ramp, n = 400 * time.Millisecond, 4
	s, err := refserver.New()
	if err != nil {
		t.Fatal(err)
	}
	inner := refserver.HTTPHandler(s, refserver.HTTPConfig{JSONResponse: true})
	var mu sync.Mutex
	var inits []time.Time
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if info := jsonrpc.Classify(body); info.Kind == jsonrpc.KindRequest && info.Method == "initialize" {
			mu.Lock()
			inits = append(inits, time.Now())
			mu.Unlock()
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	start := time.Now()
	rep, err := Run(context.Background(), Target{URL: ts.URL + refserver.Path}, mustCalls(t, `ping`), WithSessions(n), WithRamp(ramp),
		WithDuration(500*time.Millisecond), WithThink(10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if rep.Setups != n || len(inits) != n {
		t.Fatalf("setups %d, %d initialize requests", rep.Setups, len(inits))
	}
	for i, at := range inits { // appended in time order
		if want := ramp * time.Duration(i) / n; at.Sub(start) < want {
			t.Errorf("session start %d at %v, before %v", i, at.Sub(start), want)
		}
	}
}

// TestLazySessionDrain checks the Streamable HTTP sessions without a GET
// stream: a JSON answer is taken by the request that sent it (no reader
// goroutine left behind), an event-stream answer by a reader started for
// it, and concurrent requests of one session all get their answers.
func TestLazySessionDrain(t *testing.T) {
	tests := []struct {
		name     string
		cfg      refserver.HTTPConfig
		inflight int
	}{
		{"json", refserver.HTTPConfig{JSONResponse: true}, 1},
		{"json concurrent", refserver.HTTPConfig{JSONResponse: true}, 4},
		{"sse", refserver.HTTPConfig{}, 1},
		{"sse concurrent", refserver.HTTPConfig{}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := refHTTP(t, tt.cfg)
			o, err := newOptions([]Option{WithSessions(1), WithInFlight(tt.inflight), WithRequests(1000)})
			if err != nil {
				t.Fatal(err)
			}
			if o.client, err = sharedClient(o, false); err != nil {
				t.Fatal(err)
			}
			calls := mustCalls(t, `tools/call echo {"message":"hi"}`)
			r := &runner{o: o, target: Target{URL: url}, st: newStats(), work: context.Background(),
				picker: newPicker(calls, frameSpec{version: o.version})}
			s := newSession(r, 0)
			defer s.close()
			if _, err := s.ensure(context.Background()); err != nil {
				t.Fatal(err)
			}
			cc := &recvCounter{Conn: s.conn}
			s.mu.Lock()
			s.conn = cc
			s.mu.Unlock()
			var wg sync.WaitGroup
			for k := range tt.inflight {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(k), 1))
					var buf []byte
					for range 10 {
						buf, _ = s.do(context.Background(), r.picker.pick(rng), time.Now(), buf, rng)
					}
				}()
			}
			wg.Wait()
			if want := int64(10 * tt.inflight); r.st.done != want || len(r.st.errors) != 0 {
				t.Errorf("answered %d of %d, errors %v", r.st.done, want, r.st.errors)
			}
			if n := cc.waits.Load(); tt.inflight == 1 && tt.cfg.JSONResponse && n != 0 {
				t.Errorf("%d waiting Recv calls for JSON answers, want 0 (the sender takes its answer)", n)
			}
		})
	}
}

// recvCounter counts the Recv calls that may wait (those of a reader
// goroutine); Recv with an ended context takes what is queued.
type recvCounter struct {
	transport.Conn
	waits atomic.Int64
}

func (c *recvCounter) Recv(ctx context.Context) (transport.Incoming, error) {
	if ctx.Err() == nil {
		c.waits.Add(1)
	}
	return c.Conn.Recv(ctx)
}
