package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/spf13/pflag"

	"github.com/mcptape/mcptape/mock"
	"github.com/mcptape/mcptape/replay"
)

// mockFlags are the flags of "mcptape mock".
type mockFlags struct {
	session   string
	match     string
	cycle     bool
	strict    bool
	speed     string
	output    string
	force     bool
	http      string
	stateless bool
	sse       string
	ws        string
	faults    mock.Faults
}

func mockCmd() *command {
	return &command{
		name:    "mock",
		libs:    []string{"replay"},
		summary: "Serve a recorded session as an MCP server, to test clients with no real server",
		usage:   "mock TAPE... [--session ID] [--http ADDR [--stateless] | --sse ADDR | --ws ADDR] [--match exact|method|tool] [--cycle] [--strict] [--speed 1|N|max] [-o NEW_TAPE [--force]] [FAULTS]",
		examples: `  mcptape mock run.jsonl.zst                                  # stdio: point a client's command at this
  mcptape mock run.jsonl.zst --http 127.0.0.1:8080            # Streamable HTTP at http://127.0.0.1:8080/mcp
  mcptape mock run.jsonl.zst --sse 127.0.0.1:3001             # legacy HTTP+SSE at http://127.0.0.1:3001/sse
  mcptape mock run.jsonl.zst --ws 127.0.0.1:8081             # MCP over WebSocket at ws://127.0.0.1:8081/mcp and /mcp/ws
  mcptape mock run.jsonl.zst --match tool --speed max --strict
  mcptape replay run.jsonl.zst -- mcptape mock run.jsonl.zst  # the tape checks its own mock
  mcptape mock run.jsonl.zst --error-rate 0.1 --drop-rate 0.05 --delay 200ms --seed 7

  Several recorded sessions make one pool (a client tool that starts a
  session per command, like the Inspector CLI, meets the answers in
  recorded order); --session serves one. Several tapes, or a directory,
  are served joined, as inspect and check read them: the tapes of a
  rotated recording in number order, a session going on from one to the
  next (a missing tape of the rotation, or a damaged one, is warned
  about: records are missing there). Each client request gets the recorded answer of the matching recorded
  request (method and params; ids, _meta, progress tokens and cursors
  ignored), with what the server sent before it played back in place:
  progress under the live token, log messages, list_changed, and the
  server's own requests under fresh ids, their answers awaited. A key
  recorded several times answers in recorded order, then repeats the last
  answer (--cycle: starts again). An unmatched request gets a JSON-RPC
  error naming the closest recorded request (by its record number, as
  inspect and show number records: "record 12, tools/call "echo"") and why
  it differs.
  Over --http a client batch is answered in the shape the recorded server
  answered batches in: one application/json array (the default; an event
  stream when progress or a server request must go out first), one event
  per response, or one event holding the array.
  At exit a report on stderr: requests matched and unmatched, recorded
  requests never asked for (with their record numbers).
  Exit code: 0 served until the client left or SIGINT, SIGTERM or SIGHUP
  stopped it (the report is printed), 1 --strict met an unmatched request,
  2 bad invocation or tape.
`,
		setup: func(fs *pflag.FlagSet) runFunc {
			var f mockFlags
			fs.StringVar(&f.session, "session", "", "serve only the session `ID` (default: every session of the tape, as one pool)")
			fs.StringVar(&f.match, "match", "exact", "what picks the answer: exact (method and params), method, or tool (method and name/uri)")
			fs.BoolVar(&f.cycle, "cycle", false, "a request asked more often than recorded cycles through its answers (default: repeats the last)")
			fs.BoolVar(&f.strict, "strict", false, "end the run (exit 1) at the first request that matches no recorded one")
			fs.StringVar(&f.speed, "speed", "1", "recorded latency divided by `N` (0.001 to 1e9); max answers at once")
			fs.StringVarP(&f.output, "output", "o", "", "record the mock's sessions to `NEW_TAPE` (named *.jsonl.zst): every message taken and sent, the errors its HTTP endpoints answer by themselves included")
			tapeOutputFlag(fs, "output")
			fs.BoolVar(&f.force, "force", false, "overwrite the -o file when it exists (without it, an existing file is refused with exit code 2)")
			fs.StringVar(&f.http, "http", "", "serve Streamable HTTP at http://`ADDR`/mcp instead of stdio (a bare PORT listens on 127.0.0.1)")
			fs.BoolVar(&f.stateless, "stateless", false, "with --http: no sessions, every POST stands alone (protocol 2026-07-28)")
			fs.StringVar(&f.sse, "sse", "", "serve legacy HTTP+SSE at http://`ADDR`/sse instead of stdio")
			fs.StringVar(&f.ws, "ws", "", "serve MCP over WebSocket at ws://`ADDR`/mcp and ws://ADDR/mcp/ws instead of stdio (subprotocol mcp when offered; clients offering none are accepted)")
			fs.Float64Var(&f.faults.ErrorRate, "error-rate", 0, "share of requests (0..1) answered with an internal error instead")
			fs.Float64Var(&f.faults.DropRate, "drop-rate", 0, "share of requests (0..1) never answered (--http: the stream ends empty when the answer was due)")
			fs.DurationVar(&f.faults.Delay, "delay", 0, "added before every answer")
			fs.DurationVar(&f.faults.Jitter, "delay-jitter", 0, "a random extra delay up to `DUR` before every answer")
			fs.IntVar(&f.faults.DisconnectAfter, "disconnect-after", 0, "end the connection (stdio: the process; HTTP: the server) after `N` answers")
			fs.Int64Var(&f.faults.Seed, "seed", 1, "seed of the fault draws, for repeatable runs")
			return func(ctx context.Context, st *stdio, args []string) error {
				opts, err := f.check(args)
				if err != nil {
					return err
				}
				return runMock(ctx, st, &f, args, opts)
			}
		},
	}
}

// check validates the flags and returns the mock options they give.
func (f *mockFlags) check(args []string) ([]mock.Option, error) {
	switch {
	case len(args) == 0:
		return nil, usageError("no tape given (usage: mcptape mock TAPE... [FLAGS])")
	case f.http != "" && f.sse != "":
		return nil, usageError("give either --http or --sse, not both")
	case f.ws != "" && (f.http != "" || f.sse != ""):
		return nil, usageError("--ws serves WebSocket: give it without --http or --sse")
	case f.stateless && f.http == "":
		return nil, usageError("--stateless needs --http")
	case f.output == "-":
		return nil, usageError("-o -: give a file name")
	}
	m, err := mock.ParseMatch(f.match)
	if err != nil {
		return nil, usageError("--%v", err)
	}
	opts := []mock.Option{mock.WithMatch(m), mock.WithFaults(f.faults)}
	if f.cycle {
		opts = append(opts, mock.WithCycle())
	}
	if f.strict {
		opts = append(opts, mock.WithStrict())
	}
	switch v, err := speedFlag(f.speed); {
	case err != nil:
		return nil, err
	case v == 0:
		opts = append(opts, mock.WithMaxSpeed())
	default:
		opts = append(opts, mock.WithSpeed(v))
	}
	return opts, nil
}

// runMock loads the sessions of the tapes in args (read joined when
// several), serves them and reports.
func runMock(ctx context.Context, st *stdio, f *mockFlags, args []string, opts []mock.Option) error {
	// Held in memory, however big: the mock's index keeps every recorded
	// answer (a streamed session holds none until replayed).
	sessions, err := loadReplayTapes(st, "mock", args, -1)
	if err != nil {
		return withCode(2, err)
	}
	if f.session != "" {
		s, err := replay.Pick(sessions, f.session)
		if err != nil {
			return withCode(2, err)
		}
		sessions = []*replay.Session{s}
	}
	kind, target := "stdio", "mcptape mock"
	switch {
	case f.http != "":
		kind, target = "http", f.http
	case f.sse != "":
		kind, target = "sse", f.sse
	case f.ws != "":
		kind, target = "ws", f.ws
	}
	ln, err := mockListen(ctx, st, f)
	if err != nil {
		return withCode(2, err)
	}
	if ln != nil {
		defer ln.Close() // when no Serve took it
	}
	if f.output != "" {
		w, closeTape, err := createOutputTape(st, "mock", f.output, f.force, kind, target)
		if err != nil {
			return withCode(2, err)
		}
		defer closeTape()
		opts = append(opts, mock.WithTape(w))
	}
	if f.http != "" {
		shape, err := recordedBatchShape(st, args)
		if err != nil {
			return withCode(2, err)
		}
		opts = append(opts, mock.WithBatchShape(shape))
	}
	m, err := mock.New(sessions, opts...)
	if err != nil {
		return withCode(2, err)
	}
	err = serveMock(ctx, st, f, m, ln)
	rep := m.Report()
	if werr := rep.WriteText(st.err); werr != nil && err == nil {
		err = werr
	}
	switch {
	case errors.Is(err, mock.ErrMismatch):
		return withCode(1, err)
	case errors.Is(err, mock.ErrDisconnected):
		return nil
	case err != nil:
		return withCode(2, err)
	}
	return nil
}

// mockListen listens on the address of --http, --sse or --ws (nil for
// stdio), before the mock is made: a bad or busy address is then one line
// of error, not a report of a mock that never served, nor an -o tape left
// behind.
func mockListen(ctx context.Context, st *stdio, f *mockFlags) (net.Listener, error) {
	addr := cmp.Or(f.http, f.sse, f.ws)
	if addr == "" {
		return nil, nil
	}
	a, err := listenAddr(addr)
	if err != nil {
		return nil, usageError("--http/--sse/--ws: %v", err)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, listenNetwork(a), a)
	if err != nil {
		return nil, err
	}
	warnReachable(commandLogf(st.err, "mock"), "listening", ln.Addr(), "")
	return ln, nil
}

// serveMock serves m on ln (stdio when nil) with the transport the flags
// name.
func serveMock(ctx context.Context, st *stdio, f *mockFlags, m *mock.Mock, ln net.Listener) error {
	if ln == nil {
		return m.ServeStdio(ctx, st.in, st.out)
	}
	if f.ws != "" {
		fmt.Fprintf(st.err, "listening on ws://%s/mcp\n", ln.Addr())
		return m.ServeWS(ctx, ln)
	}
	if f.sse != "" {
		fmt.Fprintf(st.err, "listening on http://%s/sse\n", ln.Addr())
		return m.ServeSSE(ctx, ln)
	}
	fmt.Fprintf(st.err, "listening on http://%s/mcp\n", ln.Addr())
	return m.ServeHTTP(ctx, ln, mock.HTTPConfig{Stateless: f.stateless})
}

// recordedBatchShape returns how the recorded HTTP server answered client
// batches in the tapes of args, read as runMock reads them
// (mock.BatchJSON when they show none).
func recordedBatchShape(st *stdio, args []string) (mock.BatchShape, error) {
	r, _, err := openTapes(st, args)
	if err != nil {
		return mock.BatchJSON, err
	}
	defer r.Close()
	shape, _, err := mock.RecordedBatchShape(r)
	return shape, err
}
