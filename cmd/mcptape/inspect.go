package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/mcptape/mcptape/analysis"
	"github.com/mcptape/mcptape/tape"
)

func inspectCmd() *command {
	return &command{
		name:    "inspect",
		summary: "Summarise tapes: sessions, latency, errors, protocol violations",
		usage:   "inspect TAPE... [--format text|json] [--merge | --follow]",
		examples: `  mcptape inspect run.jsonl.zst                    # problems first, then sessions, latency, tools
  mcptape inspect a.jsonl.zst b.jsonl.zst          # one report per tape
  mcptape inspect tapes/                           # a directory: its tapes; a rotated recording's are one report
  mcptape inspect --merge pod-a/ pod-b/            # one report of every tape, sessions kept apart by proxy (P/ID)
  mcptape inspect --format json run.jsonl.zst | jq '.violations[].rule'
  zstdcat run.jsonl.zst | zstd | mcptape inspect - # "-" reads the tape from stdin
  mcptape inspect --follow run.jsonl.zst           # problems as they happen, the report at the end

  --follow reads one tape as mcptape record writes it, writes each problem
  (violation, error response, tool error) as it happens, and the report when
  the tape's end record comes or on Ctrl-C.

  Times such as "+1.234s" count from the tape's start (its header's time;
  the first record's when the header has none, or one after that record),
  as show's and its --from/--to do; each session is given from its first
  to its last record on that scale, then its length.

  A cut or damaged tape is inspected up to the damage, with a warning naming the
  record count. Exit code: 0, or 2 when a file is not a tape or cannot be read
  (the other tapes are still inspected).
`,
		setup: func(fs *pflag.FlagSet) runFunc {
			format := fs.String("format", "text", "output `FORMAT`: text (for a terminal) or json (the whole report, one JSON object per tape)")
			maxSessions := fs.Int("max-sessions", analysis.DefaultMaxSessions, "sessions listed one by one; later ones are folded into a count")
			follow := fs.BoolP("follow", "f", false, "follow one tape while it is recorded: problems as they happen, the report at its end or on Ctrl-C")
			merge := fs.Bool("merge", false, "one report of all the tapes given (several proxies of one server: sessions become PROXY/ID)")
			return func(ctx context.Context, st *stdio, args []string) error {
				if len(args) == 0 {
					return usageError("no tape given (usage: mcptape inspect TAPE... [--format text|json])")
				}
				if *format != "text" && *format != "json" {
					return usageError("--format %q: want text or json", *format)
				}
				if *maxSessions < 1 {
					return usageError("--max-sessions %d: must be at least 1", *maxSessions)
				}
				if *follow {
					switch {
					case *merge:
						return usageError("--follow and --merge cannot be combined: --follow reads one tape")
					case len(args) != 1:
						return usageError("--follow takes one tape file")
					case args[0] == "-":
						return usageError("--follow needs a file, not stdin")
					}
					return runFollowInspect(ctx, st, args[0], *format, analysis.WithMaxSessions(*maxSessions))
				}
				groups, err := groupTapes(st, args, *merge) // tapes.go
				if err != nil {
					return withCode(2, err)
				}
				return runInspect(ctx, st, groups, *format, analysis.WithMaxSessions(*maxSessions))
			}
		},
	}
}

// runInspect inspects each tape in turn; a tape that fails does not stop
// the others, and makes the exit code 2.
func runInspect(ctx context.Context, st *stdio, paths [][]string, format string, opts ...analysis.Option) error {
	defer tuneGC(analysis.RecommendedGCPercent)()
	failed := false
	for i, path := range paths {
		rep, err := inspectOne(ctx, st, path, opts)
		if err != nil {
			if ctx.Err() != nil {
				return interrupted(ctx, "")
			}
			fmt.Fprintf(st.err, "mcptape inspect: %v\n", err)
			failed = true
			continue
		}
		if rep.Tape.Warning != "" {
			fmt.Fprintf(st.err, "mcptape inspect: warning: %s\n", rep.Tape.Warning)
		}
		if format == "json" {
			err = analysis.WriteJSON(st.out, rep)
		} else {
			if i > 0 {
				fmt.Fprintln(st.out)
			}
			err = analysis.WriteText(st.out, rep)
		}
		if err != nil {
			return err
		}
	}
	if failed {
		return withCode(2, nil)
	}
	return nil
}

// inspectOne inspects the tapes of one report: stdin for "-", a tape,
// or tapes joined (a group of groupTapes, which keeps "-" alone).
func inspectOne(ctx context.Context, st *stdio, paths []string, opts []analysis.Option) (*analysis.Report, error) {
	if len(paths) != 1 || paths[0] != "-" {
		return analysis.InspectJoined(ctx, joinedName(paths), paths, opts...)
	}
	r, err := openStdinTape(st.in)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	rep, err := analysis.InspectTape(ctx, r, opts...)
	if err != nil {
		return nil, fmt.Errorf("stdin: %w", err)
	}
	rep.File = "-"
	return rep, nil
}

// openStdinTape reads a tape from the standard input.
func openStdinTape(in io.Reader) (*tape.Reader, error) {
	if in == nil {
		return nil, errors.New("stdin: no input")
	}
	r, err := tape.NewReader(in)
	if err != nil {
		return nil, fmt.Errorf("stdin: %w", err)
	}
	return r, nil
}

// runFollowInspect inspects a tape while it is recorded: problems go to
// stderr as they happen (stdout keeps the report), the report at the end.
func runFollowInspect(ctx context.Context, st *stdio, path, format string, opts ...analysis.Option) error {
	rep, err := analysis.FollowInspect(ctx, path, st.err, opts...)
	if err != nil {
		return withCode(2, err)
	}
	if rep.Tape.Warning != "" && ctx.Err() == nil {
		fmt.Fprintf(st.err, "mcptape inspect: warning: %s\n", rep.Tape.Warning)
	}
	if format == "json" {
		return analysis.WriteJSON(st.out, rep)
	}
	return analysis.WriteText(st.out, rep)
}
