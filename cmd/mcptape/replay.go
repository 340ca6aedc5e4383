package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcptape/mcptape/capture"
	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/transport"
)

// replayFlags are the flags of "mcptape replay".
type replayFlags struct {
	session     string
	all         bool
	concurrency int
	url         string
	sse         bool
	speed       string
	timeout     time.Duration
	output      string
	force       bool
	format      string
	ignore      []string
	headers     []string
	insecure    bool
	wsProto     wsProtoFlag
	unbatch     bool
	settle      time.Duration
	exactChunks bool
	streamPath  string
	stderr      string // --server-stderr
}

func replayCmd() *command {
	return &command{
		name:    "replay",
		summary: "Re-send recorded sessions to a live server, ids rewritten, and compare its answers",
		usage:   "replay TAPE [--session ID | --all] [--concurrency N] (--url URL | -- CMD [ARGS...]) [--speed 1|N|max] [--timeout DUR] [--settle DUR] [--unbatch] [--stream-path PATH] [-o NEW_TAPE [--force]] [--format text|json]",
		examples: `  mcptape replay bug.jsonl.zst -- ./my-server                     # over stdio
  mcptape replay bug.jsonl.zst --url http://127.0.0.1:8080/mcp     # over Streamable HTTP
  mcptape replay bug.jsonl.zst --url http://127.0.0.1:3001/sse --sse   # over legacy HTTP+SSE
  mcptape replay bug.jsonl.zst --url ws://127.0.0.1:8000/mcp/ws    # over WebSocket (offers subprotocol mcp)
  mcptape replay bug.jsonl.zst --url ws://127.0.0.1:8000/mcp/ws --ws-subprotocol ''   # offering none
  mcptape replay run.jsonl.zst --all --url http://127.0.0.1:8000/mcp --stream-path /mcp/stream  # LangGraph docs' HTTP
  mcptape replay run.jsonl.zst --all --concurrency 8 --speed max -- mcptape serve
  mcptape replay run.jsonl.zst -o replayed.jsonl.zst -- mcptape serve && mcptape diff run.jsonl.zst replayed.jsonl.zst
  mcptape replay run.jsonl.zst --ignore result.serverInfo.version --ignore notifications/progress -- ./srv

  The client's messages are sent in their recorded order: one that was sent
  after a server answer waits for the live answer, the others keep their
  recorded spacing divided by --speed ("max": no waiting; otherwise a
  number from 0.001 to 1e9).
  Replay is faithful: every client frame is re-sent as recorded, byte for
  byte, mistakes included (invalid JSON, frames that are not JSON-RPC
  messages, ids that are null, objects, arrays or fractions, an id used
  again), and a recorded batch is sent as a batch (--unbatch: member by
  member). Only the identifiers that must be fresh in the live session are
  rewritten: string and integer request ids (fresh ones of the same JSON
  type; an id the client used again gets the same fresh id again; with
  --concurrency above 1 unique across the run's sessions, which a
  stateless server cannot tell apart), the progress tokens and cancel
  targets naming them, the ids of answers to server requests (the live
  request's id), and task ids, requestState,
  MRTR input keys and subscription ids learnt from the live answers. The
  server's own requests (sampling, elicitation, roots, ping) are answered
  as the recording answered them, and only then (one with no recorded twin
  gets the protocol's fallback, reported as extra; an answer the live
  server refuses with an HTTP error status is reported as refused, and the
  replay goes on). Responses are compared
  with the recorded ones (ids, _meta, session and task ids and timestamps
  ignored): answers with a null or no id in order, the n-th answer to an
  id used again with its n-th use (a second answer to one request with the
  second recorded), an answer to an id no request used with the live
  answer to the same id; notifications by count per method
  (notifications/message never fails the verdict); server lines that are
  not JSON-RPC messages (a log line on stdout) are not compared, as many
  as the session recorded are let through and one more fails the replay.
  A POST the recorded server refused with an HTTP error status may be
  refused live with the same status (noted); another status fails. A
  client frame recorded cut (--max-frame-mib) is re-sent cut, with a note.
  A stdio client's blank line is not sent over HTTP or WebSocket (noted).
  After the last client
  message, the server messages recorded after it are waited for until they
  arrive, or for their recorded gap plus --settle. A request the recording
  holds no answer to (the server broke off or never answered, the
  recorder stopped or lost records; not cancelled nor refused) is sent as
  recorded, and its live answer is waited for up to --settle after the
  last client message: each session's report counts them on their own
  line ("3 requests recorded without an answer: 2 answered live, 1 not",
  naming up to 10 of each; JSON recorded_unanswered), never as a
  difference. Where the recorded HTTP
  client closed a request's response stream (the 2026-07-28 cancel), the
  live stream is closed after as many server messages as were recorded on
  it, and only those are compared; a server holding the answer's headers
  back is waited for (up to --timeout) when messages came before the
  recorded close, and the live POST is given up before the headers when
  none did.
  An answer streamed as several results under one id (the LangGraph
  dialect: content_start, content_delta..., content_end) keeps its request
  in flight until the end part; it is compared as the joined deltas plus the
  end result, chunk boundaries and counts ignored unless --exact-chunks, and
  the mean time between parts, live and recorded, is noted. A stream that
  stops before its end part (live, when --timeout is up, or in the tape) is
  reported unfinished: exit code 1 (2 when the server also ended the
  connection: the replay failed).
  Over WebSocket (--url ws://...) the upgrade offers the subprotocol mcp;
  --ws-subprotocol '' offers none, for servers that refuse it. A server
  that selects none is accepted either way.
  A tape recorded from a server of the LangGraph docs' HTTP dialect (plain
  JSON POSTs, answers on an event stream at another path, /mcp/stream)
  replays with that stream: a session whose answers came on it opens the
  recorded path before its first POST and takes the answers to its own
  requests from it; sessions replayed at once get disjoint live ids (the
  server may send every answer to every stream); the stream ending fails
  the session at once. --stream-path PATH forces it for any tape.
  Over HTTP, initialize is answered and each notification or response
  acknowledged before anything recorded after it is sent (a stdio client may
  have pipelined them); a cancel (or closing a stream), alone or in a
  batch, waits until the POST of the request it names is written and its
  headers came, or 20ms passed since that write, so as not to overtake it. A cut tape replays up to
  the cut: answers to requests whose recorded answers were cut off are
  counted as recorded without an answer, and the server requests and
  progress after the cut are noted, not counted. A big tape is read again from the
  file as it is replayed, so memory does not grow with it.
  A stdio server's stderr goes to mcptape's stderr (the report is on
  stdout), as record forwards it; --server-stderr FILE or discard moves it.
  Exit code: 0 every answer matched, 1 some differed (or are missing/extra),
  2 the replay failed (bad tape, unknown session, server died, hung or sent
  garbage; the error names the step and why), 128+N interrupted by signal
  N: 130 Ctrl-C (SIGINT), 143 SIGTERM, 129 SIGHUP (the report so far is
  printed), also when the server or a proxy in front, in the same process
  group, died of that Ctrl-C and the replay failed on it first (a failed
  replay waits up to 250ms for the signal before it exits 2).
`,
		setup: func(fs *pflag.FlagSet) runFunc {
			var f replayFlags
			fs.StringVar(&f.session, "session", "", "replay only the session `ID` (needed when the tape holds several, unless --all)")
			fs.BoolVar(&f.all, "all", false, "replay every session of the tape")
			fs.IntVar(&f.concurrency, "concurrency", 1, "with --all: sessions replayed at once, each on its own connection")
			fs.StringVar(&f.url, "url", "", "the live server's Streamable HTTP endpoint (http:// or https://) or MCP WebSocket endpoint (ws:// or wss://), instead of -- CMD")
			fs.BoolVar(&f.sse, "sse", false, "with --url: the URL is the /sse stream of a legacy HTTP+SSE (2024-11-05) server")
			fs.StringArrayVar(&f.headers, "header", nil, "with --url: add `NAME: VALUE` to every HTTP request (repeatable)")
			streamPathFlag(fs, &f.streamPath)
			insecureFlag(fs, &f.insecure, "with --url: ")
			f.wsProto.register(fs)
			serverStderrFlag(fs, &f.stderr)
			fs.StringVar(&f.speed, "speed", "1", "recorded spacing divided by `N` (0.001 to 1e9); max sends as soon as causality allows")
			fs.DurationVar(&f.timeout, "timeout", replay.DefaultTimeout, "longest wait for the live answer to one request")
			fs.DurationVar(&f.settle, "settle", replay.DefaultSettle, "after the last client message, wait for the server messages recorded after it up to their recorded gap plus `DUR`, and for the answers to requests recorded without one up to DUR")
			fs.BoolVar(&f.exactChunks, "exact-chunks", false, "compare streamed answers part by part (their number and each delta), not only the joined text and the end")
			fs.BoolVar(&f.unbatch, "unbatch", false, "send the members of a recorded batch one by one, for servers that refuse batches (default: as the recorded batch)")
			fs.StringArrayVar(&f.ignore, "ignore", nil, "leave `PATH` out of the comparison, or a notification method out of the counts (repeatable)")
			fs.StringVar(&f.format, "format", "text", "report `FORMAT`: text or json")
			fs.StringVarP(&f.output, "output", "o", "", "record the replay to `NEW_TAPE` (named *.jsonl.zst), which must not exist (for mcptape diff / inspect)")
			tapeOutputFlag(fs, "output")
			fs.BoolVar(&f.force, "force", false, "overwrite the -o file when it exists (without it, an existing file is refused with exit code 2)")
			return func(ctx context.Context, st *stdio, args []string) error {
				dash := fs.ArgsLenAtDash()
				var command []string
				if dash >= 0 {
					args, command = args[:dash], args[dash:]
				}
				opts, err := f.check(args, command)
				if err != nil {
					return err
				}
				return runReplay(ctx, st, &f, args, command, opts)
			}
		},
	}
}

// check validates the flags and returns the replay options they give.
func (f *replayFlags) check(args, command []string) ([]replay.Option, error) {
	switch {
	case len(args) == 0:
		return nil, usageError("no tape given (usage: mcptape replay TAPE... [FLAGS] (--url URL | -- CMD [ARGS...]))")
	case f.url == "" && len(command) == 0:
		return nil, usageError("no live server: give --url URL or -- CMD [ARGS...]")
	case f.url != "" && len(command) > 0:
		return nil, usageError("give either --url or -- CMD, not both")
	case f.all && f.session != "":
		return nil, usageError("give either --session or --all, not both")
	case f.concurrency != 1 && !f.all:
		return nil, usageError("--concurrency needs --all")
	case f.format != "text" && f.format != "json":
		return nil, usageError("--format %q: want text or json", f.format)
	case f.output == "-":
		return nil, usageError("-o -: stdout carries the report; give a file name")
	case (len(f.headers) > 0 || f.sse || f.insecure) && f.url == "":
		return nil, usageError("--header, --sse and --insecure need --url")
	case f.sse && transport.IsWebSocketURL(f.url):
		return nil, usageError("--sse needs an http:// or https:// --url, not %q", capture.RedactURL(f.url))
	}
	if f.url != "" {
		if err := checkServerURL("--url", f.url); err != nil {
			return nil, err
		}
	}
	if f.streamPath != "" {
		if err := checkStreamPath(f.streamPath, f.url); err != nil {
			return nil, err
		}
		if f.sse {
			return nil, usageError("--stream-path needs a Streamable HTTP --url, not --sse")
		}
	}
	if err := f.wsProto.check(f.url); err != nil {
		return nil, err
	}
	speed, err := replaySpeed(f.speed)
	if err != nil {
		return nil, err
	}
	opts := []replay.Option{replay.WithIgnore(f.ignore...), speed}
	opts = append(opts, replay.WithTimeout(f.timeout), replay.WithConcurrency(f.concurrency), replay.WithSettle(f.settle))
	if f.unbatch {
		opts = append(opts, replay.WithUnbatch())
	}
	if f.exactChunks {
		opts = append(opts, replay.WithExactChunks())
	}
	// Let the library judge the values: a bad one is a usage error.
	if err := replay.CheckOptions(opts...); err != nil {
		return nil, withCode(2, err)
	}
	return opts, nil
}

// runReplay loads the tape, replays it and turns the verdict into the exit
// code.
func runReplay(ctx context.Context, st *stdio, f *replayFlags, args []string, command []string, opts []replay.Option) error {
	st, serverErr, err := checkServerStderr(st, f.stderr, len(command) > 0)
	if err != nil {
		return err
	}
	sessions, err := loadReplayTapes(st, "replay", args, replay.DefaultMemory)
	if err != nil {
		return withCode(2, err)
	}
	if !f.all {
		s, err := replay.Pick(sessions, f.session)
		if err != nil {
			return withCode(2, err)
		}
		sessions = []*replay.Session{s}
	}
	setStreamPath(sessions, f.streamPath)
	var errw io.Writer // the servers' stderr, opened once every check passed
	dial, target, kind, err := f.dialer(ctx, st, command, func() io.Writer { return errw })
	if err != nil {
		return withCode(2, err)
	}
	if f.output != "" {
		if err := refuseInputAsOutput(f.output, args); err != nil {
			return err
		}
		w, closeTape, err := createOutputTape(st, "replay", f.output, f.force, kind, target)
		if err != nil {
			return withCode(2, err)
		}
		defer closeTape()
		opts = append(opts, replay.WithTape(w))
	}
	errw, closeErrw, err := serverErr.open()
	if err != nil {
		return err
	}
	defer closeErrw()
	stopping := announceStop(ctx, commandLogf(st.err, "replay"), "cuts that short", closingSessions(transport.DefaultGrace))
	rep, err := replay.Run(ctx, sessions, dial, opts...)
	stopping()
	if err != nil {
		if settleSignal(ctx, signalSettle) { // signals.go: the server may have died of it first
			return interrupted(ctx, "")
		}
		return withCode(2, err)
	}
	if f.format == "json" {
		err = rep.WriteJSON(st.out)
	} else {
		err = rep.WriteText(st.out)
	}
	if err != nil {
		return withCode(2, err)
	}
	// A signal: not a failure of the server, also when the server (or a
	// proxy) in the terminal's process group died of the same Ctrl-C and
	// the replay failed on that before the signal was seen here.
	if ctx.Err() != nil || (rep.ExitCode() == 2 && settleSignal(ctx, signalSettle)) {
		return interrupted(ctx, ": the report is partial")
	}
	switch rep.ExitCode() {
	case 0:
		return nil
	case 1:
		n := 0
		for _, s := range rep.Sessions {
			if s.Differs() {
				n++
			}
		}
		return withCode(1, fmt.Errorf("the live answers differ from the recording in %d of %s", n, english.Count(len(rep.Sessions), "session")))
	}
	for _, s := range rep.Sessions {
		if s.Error != "" {
			return withCode(2, fmt.Errorf("replay of session %q failed: %s", s.Session, s.Error))
		}
	}
	return withCode(2, errors.New("replay failed"))
}

// loadReplayTapes loads the sessions of the tapes in args for the command
// cmd (replay, mock), warning on stderr as loadReplayTape does: one file is
// indexed by replay.Open (with memory: see loadReplayTape); several, or a
// directory, are joined (tapes.go: a rotated recording's tapes in number
// order, as inspect and check read them) and held in memory.
func loadReplayTapes(st *stdio, cmd string, args []string, memory int64) ([]*replay.Session, error) {
	if fi, err := os.Stat(args[0]); len(args) == 1 && (err != nil || !fi.IsDir()) {
		return loadReplayTape(st, cmd, args[0], memory)
	}
	r, name, err := openTapes(st, args)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	logf := commandLogf(st.err, cmd)
	t, err := replay.LoadTape(r)
	if w := r.Warning(); w != nil {
		logf("warning: %v", w)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	warnLoaded(logf, cmd, t)
	return t.Sessions, nil
}

// warnLoaded warns under the command cmd (replay, mock) about the
// recorded frames of t skipped and the places where records are missing
// (gap markers: a damaged or missing tape of a rotated recording, a write
// error), the first few named.
func warnLoaded(logf func(string, ...any), cmd string, t *replay.Tape) {
	if t.Skipped > 0 {
		logf("warning: %s", skippedWarning(cmd, t.Skipped))
	}
	if n := len(t.Gaps); n > 0 {
		logf("warning: records are missing at %s (sessions across them may lack messages): %s", english.Count(n, "place"), strings.Join(firstGaps(t.Gaps, 3), "; "))
	}
}

// firstGaps returns the first n of gaps, and how many more there are.
func firstGaps(gaps []string, n int) []string {
	if len(gaps) <= n {
		return gaps
	}
	return append(slices.Clip(gaps[:n]), english.Count(len(gaps)-n, "more"))
}

// skippedWarning says what the command cmd (replay, mock) does with the n
// recorded server frames that are not JSON-RPC messages.
func skippedWarning(cmd string, n int) string {
	what := english.Count(n, "recorded server frame") + " not JSON-RPC"
	if cmd == "mock" {
		return what + ": not served"
	}
	return what + ": not compared (as many live ones per session are let through)"
}

// loadReplayTape reads the sessions of the tape at path, warning on stderr
// under the command cmd (replay, mock) about a damaged tail or skipped
// frames. The sessions of a tape whose frames take more than memory bytes
// are streamed from the file as they are replayed (replay.Open); a
// negative memory holds every tape.
func loadReplayTape(st *stdio, cmd, path string, memory int64) ([]*replay.Session, error) {
	logf := commandLogf(st.err, cmd)
	t, err := replay.Open(path, memory)
	if t != nil && t.Warning != nil {
		logf("warning: %v", t.Warning)
	}
	if err != nil {
		return nil, err
	}
	warnLoaded(logf, cmd, t)
	return t.Sessions, nil
}

// dialer returns how to connect to the live server (a stdio server's
// stderr going where stderr says when it is started, after every check:
// nil discards it), its description for the
// output tape's header and its transport name. ctx is the run's: a
// second signal cuts the connections' close short (stopNow).
func (f *replayFlags) dialer(ctx context.Context, st *stdio, command []string, stderr func() io.Writer) (replay.DialFunc, string, string, error) {
	now := transport.WithStopNow(stopNow(ctx))
	if f.url == "" {
		return func(ctx context.Context, _ *replay.Session) (transport.Conn, error) {
			sopts := []transport.Option{now}
			if w := stderr(); w != nil {
				sopts = append(sopts, transport.WithStderr(w))
			}
			return transport.DialStdio(ctx, command, sopts...)
		}, capture.QuoteArgs(capture.RedactArgs(command)), "stdio", nil
	}
	hopts := []transport.Option{now}
	if len(f.headers) > 0 {
		h := make(map[string][]string)
		for _, kv := range f.headers {
			k, v, ok := strings.Cut(kv, ":")
			if !ok || strings.TrimSpace(k) == "" {
				return nil, "", "", usageError("--header %q: want NAME: VALUE", capture.RedactAssignment(kv))
			}
			h[strings.TrimSpace(k)] = append(h[strings.TrimSpace(k)], strings.TrimSpace(v))
		}
		hopts = append(hopts, transport.WithHeader(h))
	}
	var copts []transport.ClientOption
	if f.insecure {
		copts = append(copts, transport.WithInsecureTLS())
	}
	if transport.IsWebSocketURL(f.url) {
		if f.wsProto.set {
			hopts = append(hopts, transport.WithWSSubprotocols(f.wsProto.protos...))
		}
		// The handshake is waited for at most --timeout.
		return wsDialer(f.url, append(hopts, transport.WithDialTimeout(f.timeout)), copts)
	}
	client, err := transport.NewHTTPClient(f.concurrency*4, copts...)
	if err != nil {
		return nil, "", "", err
	}
	hopts = append(hopts, transport.WithHTTPClient(client))
	if f.sse {
		// The stream's headers and endpoint event are waited for at most
		// --timeout.
		hopts = append(hopts, transport.WithDialTimeout(f.timeout))
		return func(ctx context.Context, _ *replay.Session) (transport.Conn, error) {
			return transport.DialLegacySSE(ctx, f.url, hopts...)
		}, capture.RedactURL(f.url), "sse", nil
	}
	return func(ctx context.Context, s *replay.Session) (transport.Conn, error) {
		return transport.DialHTTP(ctx, f.url, append(hopts[:len(hopts):len(hopts)], replay.HTTPOptions(s)...)...)
	}, capture.RedactURL(f.url), "http", nil
}
