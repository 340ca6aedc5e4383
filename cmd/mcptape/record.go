package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcptape/mcptape/capture"
	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/internal/proc"
	"github.com/mcptape/mcptape/internal/syncio"
	"github.com/mcptape/mcptape/tape"
	"github.com/mcptape/mcptape/transport"
)

// recordFlags are the flags of "mcptape record".
type recordFlags struct {
	output   string
	name     string // --name: record_name.go
	flush    time.Duration
	env      []string
	cwd      string
	grace    time.Duration
	maxFrame int
	level    int
	verbose  bool
	force    bool
}

func recordCmd() *command {
	return &command{
		name:    "record",
		summary: "Record an MCP server's traffic to a tape (stdio: run it; HTTP: proxy it)",
		usage: "record [-o FILE [--force]] [--flush DUR] [--level N] [--env K=V ...] [--cwd DIR] [--grace DUR] [-v] -- CMD [ARGS...]\n" +
			"  mcptape record --upstream URL [--listen ADDR] [-o FILE [--force]] [--flush DUR] [--level N] [--grace DUR] [-v]\n" +
			"                 [--rotate DUR] [--rotate-size SIZE] [--keep DUR] [--keep-size SIZE]",
		examples: `  mcptape record -o t.jsonl.zst -- npx -y @modelcontextprotocol/server-everything stdio
  mcptape record --env API_KEY=$KEY -- node server.js     # tape under ~/.local/state/mcptape/tapes
  mcptape record -o t.jsonl.zst -- mcptape serve          # the built-in reference server
  mcptape record --upstream http://127.0.0.1:3000/mcp -o t.jsonl.zst   # HTTP mode
  mcptape record --upstream ws://127.0.0.1:8081/mcp --listen 127.0.0.1:8932 -o t.jsonl.zst   # WebSocket
  mcptape record --upstream http://127.0.0.1:3000/mcp -o tapes/api.jsonl.zst --rotate 1h --keep 168h
      # tapes/api-000001-20261201T160700Z.jsonl.zst, -000002-..., the week's kept
  mcptape record --upstream http://127.0.0.1:8000/mcp -o t.jsonl.zst
      # also the LangGraph docs' HTTP: answers on its GET /mcp/stream are recorded with their requests

  In an MCP client's configuration, replace
    "command": "npx", "args": ["-y", "some-server"]
  with
    "command": "mcptape", "args": ["record", "-o", "/path/t.jsonl.zst", "--", "npx", "-y", "some-server"]

  stdout carries only the server's bytes; mcptape's own messages go to stderr.
  An existing -o file is never overwritten unless --force is given.
  Exit code: the server's (128+N when it died of signal N), 127 when it cannot start,
  2 for a usage error (an -o in a directory that does not exist or cannot be
  written, an -o not named *.jsonl.zst, a --cwd that is no directory, among
  them: found before the tape is created) or an -o file that already exists.
  The server dies with mcptape: SIGTERM from the kernel on Linux, a job object on
  Windows; on macOS and FreeBSD it sees its stdin end.
  SIGINT, SIGTERM and SIGHUP (the terminal closed) end a recording cleanly:
  stdio mode forwards the signal to the server and stops it (--grace; a
  second signal, Ctrl-C again, kills it at once),
  HTTP mode lets open exchanges finish (--grace, 2s by default; a second
  signal, Ctrl-C again, cuts them at once); either says on stderr what it
  waits for ("stopping: ..."), as load and replay do; the tape then gets
  what was recorded and its final records, and is closed.
`,
		setup: func(fs *pflag.FlagSet) runFunc {
			var f recordFlags
			fs.SetInterspersed(false) // the command's own flags are not ours, "--" or not
			fs.StringVarP(&f.output, "output", "o", "", "tape file to write, named *.jsonl.zst, which must not exist (default: a new file under $XDG_STATE_HOME/mcptape/tapes, ~/.local/state/mcptape/tapes, or on Windows %LOCALAPPDATA%\\mcptape\\tapes)")
			tapeOutputFlag(fs, "output")
			fs.StringVar(&f.name, "name", "", "with no -o, name the tape `NAME`-TIME-PID.jsonl.zst in the state directory (as 'mcptape wrap' does)")
			fs.BoolVar(&f.force, "force", false, "overwrite the -o file when it exists (without it, an existing file is refused with exit code 2)")
			fs.DurationVar(&f.flush, "flush", tape.DefaultFlushInterval, "how often the tape is flushed to disk; a crash loses at most twice this much (records of the last interval wait for the next frame, to keep time order)")
			fs.IntVar(&f.level, "level", tape.DefaultLevel, "zstd level of the tape, 1 to 22: 1 takes the least CPU, higher levels make smaller tapes")
			fs.IntVar(&f.maxFrame, "max-frame-mib", transport.DefaultMaxFrame>>20, "largest message recorded whole, in MiB; longer ones are forwarded whole but recorded cut")
			fs.StringArrayVar(&f.env, "env", nil, "set an environment variable `K=V` for the server (repeatable); secret-looking values are redacted in the tape")
			fs.StringVar(&f.cwd, "cwd", "", "working `DIR`ectory of the server (must exist: checked before the tape is created)")
			fs.DurationVar(&f.grace, "grace", capture.DefaultGrace, "wait between closing the server's stdin, SIGTERM and SIGKILL; HTTP mode: how long open exchanges may finish once a signal stops the proxy (default there 2s)")
			fs.BoolVarP(&f.verbose, "verbose", "v", false, "log the session's lifecycle on stderr")
			h := declareHTTPFlags(fs) // record_http.go
			return func(ctx context.Context, st *stdio, args []string) error {
				httpMode, err := h.httpMode(fs, args)
				if err != nil {
					return err
				}
				if err := f.checkCommon(); err != nil {
					return err
				}
				if err := f.applyName(st); err != nil {
					return err
				}
				if httpMode {
					for _, name := range []string{"env", "cwd"} {
						if fs.Changed(name) {
							return usageError("--%s is for a stdio server; HTTP mode (--upstream) starts none", name)
						}
					}
					run := runRecordHTTP
					if transport.IsWebSocketURL(h.upstream) {
						if err := wsFlagsApply(fs); err != nil {
							return err
						}
						run = runRecordWS
					}
					c := httpRecordConfig{
						Output: f.output, Force: f.force, Flush: f.flush, Level: f.level, MaxBody: f.maxFrame << 20, Verbose: f.verbose,
						Header: recordHeader(&f, fs, args, time.Now()),
					}
					if fs.Changed("grace") {
						c.Grace = f.grace
					}
					return run(ctx, st, h, c)
				}
				if err := f.checkStdio(args, fs.Changed("cwd")); err != nil {
					return err
				}
				return runRecord(ctx, st, &f, fs, args)
			}
		},
	}
}

// checkCommon validates the flags both modes share.
func (f *recordFlags) checkCommon() error {
	switch {
	case f.output == "-":
		return usageError("-o -: stdout is not for tapes (in stdio mode it carries the server's messages); give a file name")
	case f.flush <= 0:
		return usageError("--flush %v: must be positive", f.flush)
	case f.grace <= 0:
		return usageError("--grace %v: must be positive", f.grace)
	case f.maxFrame <= 0 || f.maxFrame > 1<<20:
		return usageError("--max-frame-mib %d: must be between 1 and %d", f.maxFrame, 1<<20)
	case f.level < 1 || f.level > 22:
		return usageError("--level %d: must be between 1 and 22", f.level)
	}
	return nil
}

// checkStdio validates the stdio-mode flags and the server command;
// cwdGiven says whether --cwd was given (an empty one is refused).
func (f *recordFlags) checkStdio(args []string, cwdGiven bool) error {
	if len(args) == 0 {
		return usageError("no server command given (usage: mcptape record [FLAGS] -- CMD [ARGS...], or --upstream URL)")
	}
	for _, kv := range f.env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return usageError("--env %q: want NAME=VALUE", capture.RedactAssignment(kv))
		}
	}
	if cwdGiven {
		return checkCwd(f.cwd)
	}
	return nil
}

// checkCwd returns a usage error when dir, the server's working directory
// (--cwd), is empty (a path lost to the shell), does not exist or is no
// directory: found before the tape is created or the server started, so
// that a typo leaves no tape holding only the server's failed start.
func checkCwd(dir string) error {
	if dir == "" {
		return usageError("--cwd is empty: want a DIR (without --cwd the server runs in mcptape's own)")
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return usageError("--cwd %s: no such directory", dir)
	case err != nil:
		return usageError("--cwd %s: %v", dir, pathErrorCause(err))
	case !fi.IsDir():
		return usageError("--cwd %s: not a directory", dir)
	}
	return nil
}

// runRecord runs one recording session and returns the server's exit code
// as an exitError.
func runRecord(ctx context.Context, st *stdio, f *recordFlags, fs *pflag.FlagSet, args []string) error {
	start := time.Now()
	errw := syncio.NewWriter(st.err)
	logf := func(format string, a ...any) {
		fmt.Fprintf(errw, "mcptape record: "+format+"\n", a...)
	}
	path := f.output
	if path == "" {
		var err error
		if path, err = defaultTapePath(os.Getenv, start, os.Getpid()); err != nil {
			return err
		}
		logf("recording to %s", path)
	}
	hdr := recordHeader(f, fs, args, start)
	w, err := createTape(path, f.force, hdr, tape.WithFlushInterval(f.flush), tape.WithLevel(f.level), recoverWrites(logf))
	if err != nil {
		return err
	}

	// Signals: SIGINT, SIGTERM and SIGHUP (shutdownSignals) are forwarded
	// to the server, which then gets the stop policy; SIGPIPE is
	// caught so that a client that stops reading makes our writes fail
	// with EPIPE instead of killing mcptape before the tape is closed.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, shutdownSignals()...)
	defer signal.Stop(sigs)
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	defer signal.Stop(pipes)

	o := capture.StdioOptions{
		Command:     args,
		Env:         append(os.Environ(), f.env...),
		Dir:         f.cwd,
		Stdin:       st.in,
		Stdout:      st.out,
		Stderr:      errw,
		CloseStdout: true,
		Tape:        w,
		Grace:       f.grace,
		MaxFrame:    f.maxFrame << 20,
		Signals:     sigs,
		Warnf:       logf,
		Debugf:      func(string, ...any) {},
	}
	if f.verbose {
		o.Debugf = logf
	}
	// main cancels ctx on the same signals; they are forwarded through
	// sigs instead, so the shutdown does not depend on ctx. The server
	// gets the first signal, SIGTERM after --grace (unless the signal was
	// SIGTERM), SIGKILL after another.
	stopping := announceStop(ctx, logf, "kills it at once", func(sig os.Signal) string {
		wait := 2 * f.grace
		if sig == syscall.SIGTERM {
			wait = f.grace
		}
		return fmt.Sprintf("waiting up to %v for the server to exit", wait)
	})
	res, runErr := capture.RunStdio(context.WithoutCancel(ctx), o)
	stopping()
	closeErr := w.Close()
	if f.verbose {
		logf("tape %s: %d client and %d server %s, %s", path, res.ClientMessages, res.ServerMessages, english.Noun(res.ServerMessages, "message"),
			english.Count(res.StderrLines, "stderr line"))
	}
	if runErr != nil {
		if errors.Is(runErr, capture.ErrStart) {
			if closeErr != nil {
				logf("closing tape: %v", closeErr)
			}
			return withCode(proc.ExitCannotStart, runErr)
		}
		return errors.Join(runErr, closeErr)
	}
	if closeErr != nil {
		// The server's exit code is kept unless it was 0: a recording that
		// failed is a failure of mcptape.
		code := res.ExitCode
		if code == 0 {
			code = 1
		}
		return withCode(code, fmt.Errorf("closing tape: %w", closeErr))
	}
	if res.ExitCode != 0 {
		return withCode(res.ExitCode, nil)
	}
	return nil
}

// recordHeader builds the tape header: the server's command line and
// mcptape's own flags, with secret values redacted.
func recordHeader(f *recordFlags, fs *pflag.FlagSet, args []string, start time.Time) tape.Header {
	argv := []string{"mcptape", "record"}
	fs.Visit(func(fl *pflag.Flag) {
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				argv = append(argv, "--"+fl.Name, v)
			}
			return
		}
		argv = append(argv, "--"+fl.Name+"="+fl.Value.String())
	})
	argv = append(argv, "--")
	argv = append(argv, args...)
	extra := struct {
		Cwd   string   `json:"cwd,omitempty"`
		Env   []string `json:"env,omitempty"`
		Pid   int      `json:"pid"`
		Grace string   `json:"grace"`
	}{Cwd: f.cwd, Pid: os.Getpid(), Grace: f.grace.String()}
	for _, kv := range f.env {
		extra.Env = append(extra.Env, capture.RedactAssignment(kv))
	}
	raw, _ := json.Marshal(extra) // plain strings and ints: cannot fail
	host, _ := os.Hostname()
	return tape.Header{
		Format:    tape.FormatVersion,
		Tool:      "mcptape",
		Version:   version,
		Time:      start.UnixNano(),
		Transport: "stdio",
		Target:    capture.QuoteArgs(capture.RedactArgs(args)),
		Argv:      capture.RedactArgs(argv),
		Host:      host,
		Extra:     raw,
	}
}

// defaultTapePath returns a new tape path under the user's state directory
// ($XDG_STATE_HOME/mcptape/tapes, or ~/.local/state/mcptape/tapes when
// XDG_STATE_HOME is unset or not absolute, %LOCALAPPDATA%\mcptape\tapes
// on Windows: see stateDir), named by start time (UTC) and
// pid, and creates the directory (mode 0700) if needed.
func defaultTapePath(getenv func(string) string, start time.Time, pid int) (string, error) {
	base, err := stateDir(runtime.GOOS, getenv) // statedir.go
	if err != nil {
		return "", err
	}
	dir := filepath.Join(base, "mcptape", "tapes")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("creating the tape directory: %w", err)
	}
	name := start.UTC().Format("20060102T150405.000000Z") + "-" + strconv.Itoa(pid) + ".jsonl.zst"
	return filepath.Join(dir, name), nil
}

// createTape creates the tape of a recording. Unless force is set, an
// existing file is refused (exit code 2) rather than overwritten: it is
// most likely an earlier recording.
func createTape(path string, force bool, h tape.Header, opts ...tape.Option) (*tape.Writer, error) {
	if !force {
		opts = append(opts, tape.WithExclusive())
	}
	w, err := tape.Create(path, h, opts...)
	if errors.Is(err, fs.ErrExist) {
		return nil, withCode(2, fmt.Errorf("%s already exists: refusing to overwrite it (give --force to replace it, or another -o)", path))
	}
	return w, err
}
