package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/mcptape/mcptape/analysis"
	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/tape"
)

// showFlags are the flags of "mcptape show".
type showFlags struct {
	session, method, dir, grep, from, to, format string
	follow                                       bool
}

func showCmd() *command {
	return &command{
		name:    "show",
		summary: "Print a tape's messages as a timeline (text, NDJSON or raw frames)",
		usage:   "show TAPE... [--session S] [--method GLOB] [--dir in|out] [--grep RE] [--from T --to T] [--format text|ndjson|raw] [--follow]",
		examples: `  mcptape show run.jsonl.zst                              # every message, with latency on responses
  mcptape show run.jsonl.zst --method 'tools/*' --from 2s --to 5s
  mcptape show run.jsonl.zst --grep '"isError":true'
  mcptape show run.jsonl.zst --format ndjson | jq 'select(.latency_ns > 1e9)'
  mcptape show run.jsonl.zst --dir in --format raw | some-mcp-server   # replay the client side by hand
  mcptape show --follow run.jsonl.zst --method 'tools/*'  # live, while mcptape record writes it
  mcptape show tapes/ pod-b.jsonl.zst                     # several tapes (or a directory) as one timeline

  --follow reads the tape as it grows (records in file order, which is time order,
  each within about 200 ms of its writing), flags problems as they happen ("!!" lines, text
  format), and stops at the tape's end record or on Ctrl-C.

  Several tapes end with one stats event, the sum of theirs, made by the joined read: the text
  form says so ("sum of the stats of N tapes"), the NDJSON form has "tapes":N in its data.

  --dir in is client to server (into the server), out is server to client (c2s and s2c work too).
  T is an offset from the tape's start (1.5s, 2m, or seconds) or an RFC 3339 time;
  a --to before the --from is an error (exit code 2), not an empty timeline.
  Columns of the text form: time since the start, session, direction (→ client to server,
  ← server to client, · event), kind, method (a response shows its request's), id, size,
  latency (responses), summary.
`,
		setup: func(fs *pflag.FlagSet) runFunc {
			var f showFlags
			fs.StringVar(&f.session, "session", "", "only this session `ID`")
			fs.StringVar(&f.method, "method", "", "only methods matching `GLOB` (* matches slashes too; responses match by their request's method)")
			fs.StringVar(&f.dir, "dir", "", "only messages going `DIR`: in (client to server) or out (server to client)")
			fs.StringVar(&f.grep, "grep", "", "only records whose frame matches the regular expression `RE`")
			fs.StringVar(&f.from, "from", "", "only records at or after `T` (offset like 1.5s, or RFC 3339 time)")
			fs.StringVar(&f.to, "to", "", "only records at or before `T`")
			fs.StringVar(&f.format, "format", "text", "output `FORMAT`: text, ndjson (one JSON object per line) or raw (exact frames, one per line)")
			fs.BoolVarP(&f.follow, "follow", "f", false, "follow the tape while it is recorded, until its end record or Ctrl-C")
			return func(ctx context.Context, st *stdio, args []string) error {
				if len(args) == 0 {
					return usageError("no tape given (usage: mcptape show TAPE... [FLAGS])")
				}
				opts, err := f.options(fs)
				if err != nil {
					return err
				}
				if f.follow {
					if len(args) != 1 {
						return usageError("--follow takes one tape file")
					}
					if args[0] == "-" {
						return usageError("--follow needs a file, not stdin")
					}
					return runFollowShow(ctx, st, args[0], opts)
				}
				return runShow(ctx, st, args, opts)
			}
		},
	}
}

// options turns the flags into analysis options; a bad value is a usage
// error.
func (f *showFlags) options(fs *pflag.FlagSet) ([]analysis.ShowOption, error) {
	var opts []analysis.ShowOption
	// add checks the option of a flag at once: a bad value is a usage
	// error that names the flag
	add := func(flag, value string, opt analysis.ShowOption) error {
		if err := analysis.CheckShowOptions(opt); err != nil {
			return flagValueError(flag, value, err)
		}
		opts = append(opts, opt)
		return nil
	}
	if err := add("format", f.format, analysis.WithFormat(analysis.Format(f.format))); err != nil {
		return nil, err
	}
	if fs.Changed("session") {
		opts = append(opts, analysis.WithSession(f.session))
	}
	if f.method != "" {
		if err := add("method", f.method, analysis.WithMethod(f.method)); err != nil {
			return nil, err
		}
	}
	switch f.dir {
	case "":
	case "in", "c2s":
		opts = append(opts, analysis.WithDir(tape.ClientToServer))
	case "out", "s2c":
		opts = append(opts, analysis.WithDir(tape.ServerToClient))
	default:
		return nil, usageError("--dir %q: want in (client to server) or out (server to client)", f.dir)
	}
	if f.grep != "" {
		if err := add("grep", f.grep, analysis.WithGrep(f.grep)); err != nil {
			return nil, err
		}
	}
	for _, b := range []struct {
		name, value string
		opt         func(analysis.TimeSpec) analysis.ShowOption
	}{{"from", f.from, analysis.WithFrom}, {"to", f.to, analysis.WithTo}} {
		if b.value == "" {
			continue
		}
		t, err := analysis.ParseTimeSpec(b.value)
		if err != nil {
			return nil, flagValueError(b.name, b.value, err)
		}
		opts = append(opts, b.opt(t))
	}
	// Check every option now, so that a bad one is a usage error.
	if err := analysis.CheckShowOptions(opts...); err != nil {
		return nil, usageError("%v", err)
	}
	return opts, nil
}

func runShow(ctx context.Context, st *stdio, args []string, opts []analysis.ShowOption) error {
	r, name, err := openTapes(st, args) // tapes.go: several are joined
	if err != nil {
		return withCode(2, err)
	}
	defer r.Close()
	stats, err := analysis.ShowTape(ctx, r, st.out, opts...)
	if err != nil {
		if ctx.Err() != nil {
			return interrupted(ctx, "")
		}
		return showError(name, err)
	}
	if stats.Warning != nil {
		fmt.Fprintf(st.err, "mcptape show: warning: %v\n", stats.Warning)
	}
	if stats.Compacted > 0 {
		fmt.Fprintf(st.err, "mcptape show: %s with line breaks written compacted, one per line\n", english.Count(stats.Compacted, "frame"))
	}
	return nil
}

// runFollowShow shows a tape while it is recorded; Ctrl-C ends it
// normally.
func runFollowShow(ctx context.Context, st *stdio, path string, opts []analysis.ShowOption) error {
	stats, err := analysis.FollowShow(ctx, path, st.out, opts...)
	if err != nil {
		return showError(path, err)
	}
	if stats.Warning != nil && ctx.Err() == nil {
		fmt.Fprintf(st.err, "mcptape show: warning: %v\n", stats.Warning)
	}
	return nil
}

// showError is the error of show reading the tape name: a time window that
// ends before it starts, found once the tape's start is known, is the
// usage error it would have been on the command line (one line, exit 2);
// any other error is said under the tape's name.
func showError(name string, err error) error {
	var we *analysis.WindowError
	if errors.As(err, &we) {
		return usageError("%v", we)
	}
	return withCode(2, fmt.Errorf("%s: %w", name, err))
}
