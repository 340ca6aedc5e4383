package main

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/mcptape/mcptape/analysis"
	"github.com/mcptape/mcptape/internal/english"
)

func diffCmd() *command {
	return &command{
		name:    "diff",
		summary: "Compare two tapes message by message, ids and volatile fields ignored",
		usage:   "diff A B [--ignore PATH ...] [--no-default-ignores] [--max-listed N] [--format text|json]\n  mcptape diff --surface A B [--format text|json]",
		examples: `  mcptape diff recorded.jsonl.zst replayed.jsonl.zst
  mcptape diff a.jsonl.zst b.jsonl.zst --ignore 'result.content[*].text' --ignore '**.etag'
  mcptape diff a.jsonl.zst b.jsonl.zst --format json | jq '.mismatches[].diffs'

  Sessions are paired in the order they first appear; in a session the Nth
  message of a direction, kind and method is compared with the Nth of the other
  tape, and a response with the response to its partner request. Ignored by
  default: ids, params.requestId, _meta, progress tokens, session, task and
  subscription ids, requestState, timestamps (--no-default-ignores compares them).
  PATH syntax: a.b[0].c, [*] any index, * any key or index, ** any depth,
  ["key.with.dots"]. A or B may be a directory: its tapes read as one (a rotated
  recording). Exit code: 0 equal, 1 different, 2 error.

  mcptape diff --surface baseline.json today.jsonl.zst
  --surface compares what the server offered instead: tools, prompts, resources
  and templates (A and B are tapes or mcptape baseline files), added, removed,
  and changed description, title, inputSchema, outputSchema, annotations. Exit
  code: 1 on a breaking change (a removed entry, a new required argument, a
  changed type), 0 otherwise (additions are listed), 2 error.
`,
		setup: func(fs *pflag.FlagSet) runFunc {
			var ignore []string
			fs.StringArrayVar(&ignore, "ignore", nil, "leave `PATH` out of the comparison (repeatable)")
			noDefaults := fs.Bool("no-default-ignores", false, "compare ids, _meta, tokens and timestamps too")
			format := fs.String("format", "text", "output `FORMAT`: text or json")
			maxListed := fs.Int("max-listed", analysis.DefaultMaxMismatches, "mismatches and one-sided messages listed (all are counted)")
			surface := fs.Bool("surface", false, "compare the tools, prompts and resources offered (tapes or baseline files)")
			return func(ctx context.Context, st *stdio, args []string) error {
				if len(args) != 2 {
					return usageError("want two tapes, got %s (usage: mcptape diff A B [--ignore PATH ...], or mcptape diff --surface A B)",
						english.Count(len(args), "argument"))
				}
				if *format != "text" && *format != "json" {
					return usageError("--format %q: want text or json", *format)
				}
				if args[0] == "-" && args[1] == "-" {
					return usageError("A and B are both - : stdin holds one tape; give the other as a file")
				}
				if *surface {
					return runSurfaceDiff(ctx, st, args[0], args[1], *format)
				}
				opts := []analysis.DiffOption{analysis.WithIgnorePaths(ignore...), analysis.WithMaxMismatches(*maxListed)}
				if *noDefaults {
					opts = append(opts, analysis.WithoutDefaultIgnores())
				}
				if err := analysis.CheckDiffOptions(opts...); err != nil {
					return usageError("%v", err)
				}
				return runDiff(ctx, st, args[0], args[1], *format, opts)
			}
		},
	}
}

// runDiff compares two tapes and turns the verdict into the exit code.
func runDiff(ctx context.Context, st *stdio, a, b, format string, opts []analysis.DiffOption) error {
	rep, err := diffPaths(ctx, st, a, b, opts)
	if err != nil {
		if ctx.Err() != nil {
			return interrupted(ctx, "")
		}
		return withCode(2, err)
	}
	for _, s := range []analysis.DiffSide{rep.A, rep.B} {
		if s.Warning != "" {
			fmt.Fprintf(st.err, "mcptape diff: warning: %s\n", s.Warning)
		}
	}
	if format == "json" {
		err = analysis.WriteDiffJSON(st.out, rep)
	} else {
		err = analysis.WriteDiffText(st.out, rep)
	}
	if err != nil {
		return withCode(2, err)
	}
	if !rep.Same() {
		return withCode(1, nil)
	}
	return nil
}

// runSurfaceDiff compares the surfaces of a and b: exit 1 on a breaking
// change.
func runSurfaceDiff(ctx context.Context, st *stdio, a, b, format string) error {
	var sides [2]*analysis.Surface
	for i, path := range []string{a, b} {
		s, err := analysis.LoadSurface(ctx, path)
		if err != nil {
			if ctx.Err() != nil {
				return interrupted(ctx, "")
			}
			return withCode(2, err)
		}
		sides[i] = s
	}
	changes := analysis.DiffSurface(sides[0], sides[1])
	unknown := analysis.NotCompared(sides[0], sides[1])
	var err error
	if format == "json" {
		err = analysis.WriteSurfaceDiffJSON(st.out, changes, unknown)
	} else {
		err = analysis.WriteSurfaceDiffText(st.out, changes, unknown)
	}
	if err != nil {
		return withCode(2, err)
	}
	if analysis.Breaking(changes) {
		return withCode(1, nil)
	}
	return nil
}

// diffPaths compares the tapes a and b; a directory stands for the tapes
// in it, joined (a rotated recording).
func diffPaths(ctx context.Context, st *stdio, a, b string, opts []analysis.DiffOption) (*analysis.DiffReport, error) {
	ra, na, err := openTapes(st, []string{a})
	if err != nil {
		return nil, err
	}
	defer ra.Close()
	rb, nb, err := openTapes(st, []string{b})
	if err != nil {
		return nil, err
	}
	defer rb.Close()
	rep, err := analysis.DiffTapes(ctx, ra, rb, opts...)
	if err != nil {
		return nil, fmt.Errorf("diff %s %s: %w", na, nb, err)
	}
	rep.A.File, rep.B.File = a, b
	return rep, nil
}
