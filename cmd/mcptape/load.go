package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/pprof"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/internal/privfile"
	"github.com/mcptape/mcptape/loadgen"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/transport"
)

// loadFlags are the flags of "mcptape load".
type loadFlags struct {
	url, sse    string
	calls       []string
	scenario    string
	tape        string
	session     string
	speed       string
	unbatch     bool
	sessions    int
	inflight    int
	think       time.Duration
	rate        string
	maxInflight int
	maxConns    int
	batch       int
	cancelAfter time.Duration
	cancelRatio float64
	ramp        time.Duration
	duration    time.Duration
	requests    int64
	timeout     time.Duration
	protocol    string
	progress    bool
	getStream   bool
	streamPath  string
	headers     []string
	jsonOut     string
	hgrm        string
	hlog        string
	hlogEvery   time.Duration
	thresholds  []string
	stages      []string
	results     string
	findMax     findMaxFlags
	every       time.Duration
	quiet       bool
	cpuprofile  string
	onExit      string
	stderr      string        // --server-stderr
	serverErr   *serverStderr // checked; opened by openServerStderr
	insecure    bool
	wsProto     wsProtoFlag
	grace       time.Duration
}

func loadCmd() *command {
	return &command{
		name:    "load",
		libs:    []string{"replay"},
		summary: "Load-test an MCP server: many sessions, open or closed model, HDR latency report",
		usage:   "load (--url URL | --sse URL | -- CMD [ARGS...]) --call 'METHOD [TOOL] [JSON]'... [--sessions N] [--rate R/s] (--duration DUR | --requests N) [--json FILE] [--threshold T]...",
		examples: `  mcptape load --url http://127.0.0.1:8080/mcp --sessions 50 --duration 30s --call 'tools/call echo {"message":"hi"}'
  mcptape load --url https://staging/mcp --rate 2000/s --duration 5m --call 'tools/call search {"q":"x"}' --json run.json
  mcptape load --sessions 100 --inflight 8 --requests 100000 --call '3:tools/call echo {"message":"hi"}' --call tools/list -- mcptape serve
  mcptape load --url http://127.0.0.1:8080/mcp --protocol 2026-07-28 --rate 500/s --duration 1m --call 'tools/call echo {"message":"hi"}' --threshold 'tools/call:p99<50ms' --threshold 'errors<1%'
  mcptape load --url http://127.0.0.1:8080/mcp --stage 30s:100/s --stage 1m:100/s --stage 30s:0/s --call ping   # ramp, hold, ramp down
  mcptape load --url http://127.0.0.1:8080/mcp --stage 30s:50 --stage 1m:50 --call ping   # closed model: 0 to 50 sessions
  mcptape load --url http://127.0.0.1:8080/mcp --find-max --threshold 'tools/call:p99<100ms' --threshold 'errors<1%' --call 'tools/call search {"q":"x"}'
  mcptape load --url http://127.0.0.1:8080/mcp --scenario agent.json --sessions 200 --duration 2m
  mcptape load --url ws://127.0.0.1:8000/mcp/ws --ws-subprotocol '' --requests 100 --call 'tools/call chat {"query":"hi"}'   # WebSocket, no subprotocol offered
  mcptape load --tape run.jsonl.zst --sessions 50 --speed max -- ./my-server   # amplified replay
  mcptape load --url http://127.0.0.1:8000/mcp --stream-path /mcp/stream --sessions 10 --inflight 2 \
    --requests 1000 --call 'tools/call chat {"query":"hi"}'   # LangGraph docs' HTTP: answers on GET /mcp/stream
  mcptape report merge gen-0.json gen-1.json gen-2.json --json all.json

  Closed model (default): each session sends its next request when the last
  is answered (--inflight loops per session, --think between). Open model
  (--rate): arrivals at fixed intended times spread over the sessions,
  latency measured from the intended time (coordinated omission corrected);
  arrivals beyond --max-inflight are dropped and counted; the run lasts
  --duration (or the stages) even when its last arrival came earlier.
  --stage DUR:TARGET (repeatable) shapes the load: each stage moves the
  target linearly from the previous one (0 before the first) over DUR; the
  run lasts the stages. Rate targets (100/s) are the open model, session
  targets (50) the closed model, where session i works while the target
  is above i. The reports give each stage its own figures (requests, per
  series too, and dropped arrivals due in the stage's time) beside the
  whole run.
  --find-max searches the capacity: the highest open-model rate at which
  every --threshold holds. It steps the rate up from --rate (default 10/s),
  doubling, until a threshold breaks or --max-rate held, then bisects until
  the bracket is within --find-precision. Each step runs at its rate for
  --warmup (discarded; no ramp) then --step-duration (measured). The result (highest rate
  held, lowest that broke, confidence) and the table of steps go to the
  text and JSON reports; a step that broke while the generator itself ran
  50ms or more late (a stalled process) is run once more, and the second
  run's verdict stands (the step's verdict says "run again"); exit 0 when
  a rate held, 3 when even the first step broke.
  Series: each method, each tool ("tools/call NAME") and "session setup".
  The text report goes to stdout (to stderr with --json -). Each request
  sent is counted once: ok, error answers (a JSON-RPC error, a tool isError,
  a protocol-breaking answer), no answer (timeout, transport, HTTP error
  status, expired session, interrupted), or cancelled on purpose; shares
  over the requests sent. Dropped arrivals (open model) were never sent,
  their share over the arrivals. "not ok" sums error answers, no answer
  and dropped over the arrivals: what 'errors<N' and 'errors<F%' judge.
  The duration says how long setting up took in the closed model (until
  the first request was sent: a stdio server's start, initialize, setup
  steps; the open model sets up before its clock starts), how long
  requests were sent (to --duration, the last of --requests or the end of
  the tape, or Ctrl-C) and how long the wait for the answers then in
  flight lasted (each up to --timeout), then the time closing the
  sessions took (not measured; up to --grace): sent/s is over the
  sending, ok/s and each series' rate over the sending and the wait
  (vegeta's rate and throughput; JSON setup_ns, sending_ns, wait_ns). A tape's session ends at its last answer.
  Session setup (and scenario setup steps) have no rate: counted, not
  paced. Errors are listed by kind (transport, http status, jsonrpc
  error, tool isError, timeout, cancelled, dropped, protocol, session
  expired) and message, with counts; each series shows its errors over
  its own requests. A stdio server that exits fails its requests in
  flight at once ("server exited (status N)");
  --on-exit stop (default) then ends the run, --on-exit restart starts it
  again. Sessions whose server cannot be reached, or answers 429, 502, 503
  or 504, back off (50 ms doubling to 1 s, with jitter; other HTTP error
  statuses are answers, counted); the report says how long the server was
  down.
  Exit code: 0 done; 1 the run failed: no session could be set up, a stdio
  server exited under --on-exit stop, the server was still unreachable
  after the run's last second, or not one request succeeded (every one
  failed: unless a --threshold on errors is given, which then decides,
  e.g. 'errors<=100%' to accept it); the report says why (FAILED, and
  "failure" in --json); 2 bad usage; 3 a --threshold was broken; 128+N
  interrupted by signal N: 130 Ctrl-C (SIGINT), 143 SIGTERM, 129 SIGHUP
  (the partial report is printed, the requests in flight counted as
  cancelled).
`,
		setup: func(fs *pflag.FlagSet) runFunc {
			var f loadFlags
			// flags in groups, in this order (TestLoadHelpGroups): target
			fs.StringVar(&f.url, "url", "", "the server's Streamable HTTP endpoint (http:// or https://) or MCP WebSocket endpoint (ws:// or wss://)")
			fs.StringVar(&f.sse, "sse", "", "legacy HTTP+SSE stream URL of the server (…/sse)")
			fs.StringVar(&f.protocol, "protocol", loadgen.DefaultProtocolVersion, "protocol `VERSION` to ask for; 2026-07-28 is stateless (no handshake)")
			// workload
			fs.StringArrayVar(&f.calls, "call", nil, "workload call `[W:]METHOD [TOOL] [JSON]` with optional weight W (repeatable)")
			fs.StringVar(&f.scenario, "scenario", "", "workload from `FILE.json`: per-session setup steps, weighted steps, think times, templated arguments (see 'mcptape help scenario')")
			fs.StringVar(&f.tape, "tape", "", "tape-driven load: every virtual session replays a recorded session of `TAPE` once (ids rewritten, a streamed answer measured to its end part as with --call); --duration and --requests end it earlier")
			fs.StringVar(&f.session, "session", "", "with --tape: replay only the recorded session `ID` (default: all, in turn)")
			fs.StringVar(&f.speed, "speed", "1", "with --tape: recorded spacing divided by `N` (0.001 to 1e9); max sends as soon as causality allows")
			fs.BoolVar(&f.unbatch, "unbatch", false, "with --tape: send the members of a recorded batch one by one (default: as the recorded batch)")
			fs.IntVar(&f.batch, "batch", 1, "send requests `K` at a time as JSON-RPC batches and report how the server answered")
			fs.BoolVar(&f.progress, "progress", false, "attach a progressToken to every call and report the progress notifications")
			// model and rate
			fs.IntVar(&f.sessions, "sessions", 1, "virtual sessions (each its own MCP session; over stdio its own child process; at most 1000000)")
			fs.IntVar(&f.inflight, "inflight", 1, "closed model: requests in flight per session (sessions times this: at most 1000000)")
			fs.DurationVar(&f.think, "think", 0, "closed model: pause between an answer and the next request")
			fs.StringVar(&f.rate, "rate", "", "open model: arrivals per second, `R/s` (also R/m)")
			fs.IntVar(&f.maxInflight, "max-inflight", loadgen.DefaultMaxInFlight, "open model: most requests in flight; later arrivals are dropped and counted")
			fs.DurationVar(&f.ramp, "ramp", 0, "start sessions (closed) or grow the rate (open) linearly over `DUR`")
			fs.StringArrayVar(&f.stages, "stage", nil, "shape the load: `DUR:TARGET`, sessions (closed model, 1m:50) or a rate (open model, 30s:100/s), ramping linearly from the previous target (0 before the first); repeatable, run in order")
			// capacity search
			f.findMax.register(fs)
			// duration
			fs.DurationVar(&f.duration, "duration", 0, "stop starting requests after `DUR` (the answers then in flight are waited for, each up to --timeout)")
			fs.Int64Var(&f.requests, "requests", 0, "stop after `N` requests")
			fs.DurationVar(&f.timeout, "timeout", loadgen.DefaultTimeout, "longest wait for one answer, session setup included")
			// HTTP and WebSocket options
			fs.StringArrayVar(&f.headers, "header", nil, "add `NAME: VALUE` to every HTTP request (repeatable)")
			insecureFlag(fs, &f.insecure, "with --url or --sse: ")
			f.wsProto.register(fs)
			fs.BoolVar(&f.getStream, "get-stream", false, "with --url: open each session's GET stream")
			streamPathFlag(fs, &f.streamPath)
			fs.IntVar(&f.maxConns, "max-conns", 0, "most HTTP connections to the server for requests (0: one per request in flight; each session's GET or legacy SSE stream holds one more); bounds memory with many sessions")
			// cancellation
			fs.DurationVar(&f.cancelAfter, "cancel-after", 0, "cancel calls not answered `DUR` after they were sent (notifications/cancelled and/or closing the stream), never before the call's request is written (over HTTP: and its answer's headers came, or 20ms passed)")
			fs.Float64Var(&f.cancelRatio, "cancel-ratio", 0, "share `F` of the calls to cancel (default 1 with --cancel-after)")
			// the server process (-- CMD)
			serverStderrFlag(fs, &f.stderr)
			fs.StringVar(&f.onExit, "on-exit", loadgen.OnExitStop, "with -- CMD: `POLICY` when a server exits during the run: stop (the run ends, exit 1) or restart")
			fs.DurationVar(&f.grace, "grace", transport.DefaultGrace, "closing a session: wait between closing a stdio server's stdin, SIGTERM and SIGKILL; over HTTP for the answer to DELETE (a second Ctrl-C cuts it)")
			// outputs
			fs.StringVar(&f.jsonOut, "json", "", "write the full report (histograms included) as JSON to `FILE` (- for stdout)")
			fs.StringVar(&f.results, "results", "", "write one line per request to `FILE`: intended and send times, latency, series, outcome, error kind, counted as (ok, error_answer, no_answer, cancelled, dropped); CSV for .csv, NDJSON for .ndjson, .jsonl or .json")
			fs.StringVar(&f.hgrm, "hgrm", "", "write one percentile distribution file per series (SERIES.hgrm, for the HdrHistogram plotter) into `DIR`; with --find-max: of the step at the highest rate that held")
			fs.StringVar(&f.hlog, "hlog", "", "write an HdrHistogram interval log (one histogram per series per interval) to `FILE`")
			fs.DurationVar(&f.hlogEvery, "hlog-interval", loadgen.DefaultInterval, "interval of --hlog and of the intervals the JSON report records (charts over time in 'mcptape report RUN.json')")
			fs.DurationVar(&f.every, "every", 2*time.Second, "live progress interval on stderr: two lines, the time, ok/s, in flight and p99 (of the answers so far; 'in flight (oldest D)' shows a stall as it happens), then the requests counted as the report counts them (ok, error answers, no answer, cancelled on purpose, dropped; one at 0 left out)")
			fs.BoolVarP(&f.quiet, "quiet", "q", false, "no live progress")
			// thresholds
			fs.StringArrayVar(&f.thresholds, "threshold", nil, "fail with exit code 3 unless `T` holds: 'SERIES:p99<50ms', 'errors<1%', for streamed answers 'SERIES#first_chunk:p99<300ms', 'SERIES:tokens_per_s>50' (repeatable)")
			fs.StringVar(&f.cpuprofile, "cpuprofile", "", "write a CPU profile of the generator to `FILE` (for tuning mcptape itself)")
			for _, name := range []string{"json", "results", "hlog", "cpuprofile"} {
				outputFlag(fs, name, false)
			}
			outputFlag(fs, "hgrm", true)
			_ = fs.MarkHidden("cpuprofile")
			return func(ctx context.Context, st *stdio, args []string) error {
				var command []string
				if dash := fs.ArgsLenAtDash(); dash >= 0 {
					args, command = args[:dash], args[dash:]
				}
				if len(args) > 0 {
					return usageError("unexpected argument %q (a server command goes after --)", args[0])
				}
				st, serverErr, err := checkServerStderr(st, f.stderr, len(command) > 0)
				if err != nil {
					return err
				}
				f.serverErr = serverErr
				if f.findMax.on {
					return runFindMax(ctx, st, &f, command)
				}
				if f.tape != "" {
					return runTapeLoad(ctx, st, &f, command)
				}
				if f.unbatch {
					return usageError("--unbatch needs --tape")
				}
				return runLoad(ctx, st, &f, command)
			}
		},
	}
}

// runLoad runs "mcptape load" of generated calls (--call, --scenario):
// the flags checked, the outputs created, the run, then its reports.
func runLoad(ctx context.Context, st *stdio, f *loadFlags, command []string) error {
	target, calls, opts, th, err := f.check(ctx, command)
	if err != nil {
		return err
	}
	opts, bar, err := liveOptions(st, f, opts)
	if err != nil {
		return err
	}
	var format string // of --results
	if f.results != "" {
		if format, err = loadgen.ResultsFormat(f.results); err != nil {
			return usageError("--results: %v", err)
		}
		if f.batch != 1 {
			return usageError("--results writes single requests, not --batch")
		}
	}
	// Every check passed: the output files are created (truncated) now,
	// so that bad input leaves existing ones as they were.
	if f.hlog != "" {
		fh, err := privfile.Create(f.hlog)
		if err != nil {
			return withCode(2, fmt.Errorf("--hlog: %w", err))
		}
		defer fh.Close()
		opts = append(opts, loadgen.WithHlog(fh, f.hlogEvery)) // check: at least 10ms
	}
	if f.results != "" {
		fh, err := privfile.Create(f.results)
		if err != nil {
			return withCode(2, fmt.Errorf("--results: %w", err))
		}
		defer fh.Close()
		opts = append(opts, loadgen.WithResults(fh, format))
	}
	stopProfile, err := startCPUProfile(f.cpuprofile)
	if err != nil {
		return err
	}
	opts, closeErrw, err := f.openServerStderr(opts, bar)
	if err != nil {
		stopProfile()
		return err
	}
	defer closeErrw()
	stopping := announceStop(ctx, loadLogf(st, bar), "cuts that short", closingSessions(f.grace))
	rep, err := loadgen.Run(ctx, target, calls, opts...)
	stopping()
	stopProfile()
	if bar != nil {
		bar.finish(err != nil || rep.Interrupted)
	}
	if err != nil {
		return withCode(2, err)
	}
	if f.hgrm != "" {
		if err := rep.WriteHgrmDir(f.hgrm); err != nil {
			return err
		}
	}
	return emitReport(ctx, st, rep, f.jsonOut, th)
}

// runTapeLoad runs "mcptape load --tape": --sessions virtual sessions,
// each replaying a recorded session, all at once.
func runTapeLoad(ctx context.Context, st *stdio, f *loadFlags, command []string) error {
	if len(f.calls) > 0 || f.scenario != "" || f.rate != "" || f.batch != 1 || f.cancelRatio != 0 || f.cancelAfter != 0 || f.progress || f.inflight != 1 || f.think != 0 ||
		f.onExit != loadgen.OnExitStop || f.results != "" {
		return usageError("--tape replays the recorded requests: --call, --scenario, --rate, --batch, --cancel-*, --progress, --inflight, --think, --on-exit and --results do not apply")
	}
	target, _, opts, th, err := f.check(ctx, command)
	if err != nil {
		return err
	}
	var ropts []replay.Option
	if f.unbatch {
		ropts = append(ropts, replay.WithUnbatch())
	}
	speed, err := replaySpeed(f.speed)
	if err != nil {
		return err
	}
	ropts = append(ropts, speed)
	t, err := replay.Open(f.tape, replay.DefaultMemory)
	if err != nil {
		return withCode(2, err)
	}
	sessions := t.Sessions
	if f.session != "" {
		s, err := replay.Pick(sessions, f.session)
		if err != nil {
			return withCode(2, err)
		}
		sessions = []*replay.Session{s}
	}
	setStreamPath(sessions, f.streamPath)
	opts, bar, err := liveOptions(st, f, opts)
	if err != nil {
		return err
	}
	opts, closeErrw, err := f.openServerStderr(opts, bar)
	if err != nil {
		return err
	}
	defer closeErrw()
	stopping := announceStop(ctx, loadLogf(st, bar), "cuts that short", closingSessions(f.grace))
	rep, err := loadgen.RunTape(ctx, target, sessions, f.sessions, ropts, opts...)
	stopping()
	if bar != nil {
		bar.finish(err != nil || rep.Interrupted)
	}
	if err != nil {
		return withCode(2, err)
	}
	return emitReport(ctx, st, rep, f.jsonOut, th)
}

// openServerStderr opens --server-stderr (a FILE is created only now,
// after every check of the run) and adds it to opts; the returned
// function closes it after the run. With the live bar (not nil) the
// servers' lines for mcptape's stderr go above it (liveBar.aboveBar).
func (f *loadFlags) openServerStderr(opts []loadgen.Option, bar *liveBar) ([]loadgen.Option, func(), error) {
	w, closeFn, err := f.serverErr.open()
	if err != nil {
		return nil, nil, err
	}
	if bar != nil && f.serverErr.toStderr {
		w = bar.aboveBar()
	}
	if w != nil {
		opts = append(opts, loadgen.WithServerStderr(w))
	}
	return opts, closeFn, nil
}

// loadLogf returns the logger of load's own lines on stderr: above the
// live bar when there is one (not nil).
func loadLogf(st *stdio, bar *liveBar) func(string, ...any) {
	if bar != nil {
		return commandLogf(bar.aboveBar(), "load")
	}
	return commandLogf(st.err, "load")
}

// emitReport writes the text report (to stdout, or stderr when the JSON
// goes to stdout), the JSON report when asked, then checks the thresholds
// and returns the exit code: 128+N when signal N interrupted the run (see
// interruptedCode; ctx is the run's), 1 when it failed (Report.Failure,
// which Judge sets when not one request succeeded unless a threshold on
// errors judges that), 3 when a threshold is broken.
func emitReport(ctx context.Context, st *stdio, rep *loadgen.Report, jsonOut string, th []loadgen.Threshold) error {
	rep.Judge(th) // before the reports: they say the verdict
	text := st.out
	if jsonOut == "-" {
		text = st.err
	}
	if err := rep.WriteText(text); err != nil {
		return err
	}
	if jsonOut != "" {
		if err := writeReportJSON(st.out, jsonOut, rep); err != nil {
			return err
		}
	}
	var broken []string
	for _, t := range th {
		if why := t.Check(rep); why != "" {
			broken = append(broken, why)
		}
	}
	for _, b := range broken {
		fmt.Fprintf(st.err, "threshold %s\n", b)
	}
	switch {
	case rep.Interrupted:
		return interrupted(ctx, ": the report is partial")
	case rep.Failure != "":
		return withCode(1, errors.New(rep.Failure))
	case len(broken) > 0:
		return withCode(3, fmt.Errorf("%d of %s broken", len(broken), english.Count(len(th), "threshold")))
	}
	return nil
}

// writeReportJSON writes rep to path (mode 0600) or to out for "-".
func writeReportJSON(out io.Writer, path string, rep *loadgen.Report) error {
	if path == "-" {
		return rep.WriteJSON(out)
	}
	fh, err := privfile.Create(path)
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	werr := rep.WriteJSON(fh)
	cerr := fh.Close()
	if err := errors.Join(werr, cerr); err != nil {
		return fmt.Errorf("report %s: %w", path, err)
	}
	return nil
}

// startCPUProfile starts the hidden --cpuprofile of "mcptape load" (a
// profile of the generator itself, to tune it); the returned function
// stops it. An empty path profiles nothing.
func startCPUProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	fh, err := privfile.Create(path)
	if err != nil {
		return nil, withCode(2, fmt.Errorf("--cpuprofile: %w", err))
	}
	if err := pprof.StartCPUProfile(fh); err != nil {
		fh.Close()
		return nil, withCode(2, fmt.Errorf("--cpuprofile: %w", err))
	}
	return func() {
		pprof.StopCPUProfile()
		fh.Close()
	}, nil
}
