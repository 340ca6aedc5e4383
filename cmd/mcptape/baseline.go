package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mcptape/mcptape/analysis"
	"github.com/mcptape/mcptape/internal/english"
)

func baselineCmd() *command {
	return &command{
		name:    "baseline",
		summary: "Write the tools, prompts and resources a server offered in a tape, for drift checks",
		usage:   "baseline TAPE -o FILE",
		examples: `  mcptape baseline run.jsonl.zst -o surface.json
  mcptape check today.jsonl.zst --baseline surface.json   # exit 1 on a breaking change
  mcptape diff --surface surface.json today.jsonl.zst

  The baseline holds each definition as the server sent it in its list results
  (tools/list, prompts/list, resources/list, resources/templates/list), and
  which lists the tape had: a list never asked for is not compared. It is
  JSON: -o names it .json (or with no extension).
  Exit code: 0, or 2 when the tape cannot be read.
`,
		setup: func(fs *pflag.FlagSet) runFunc {
			out := fs.StringP("output", "o", "", "write the baseline to `FILE` (required; - for stdout)")
			outputFlag(fs, "output", false)
			return func(ctx context.Context, st *stdio, args []string) error {
				if len(args) != 1 {
					return usageError("want one tape, got %d arguments (usage: mcptape baseline TAPE -o FILE)", len(args))
				}
				if *out == "" {
					return usageError("-o FILE is required (use -o - for stdout)")
				}
				if err := checkOutputFits(*out, args, "baseline writes JSON", ".json"); err != nil {
					return err
				}
				s, err := analysis.ReadSurface(ctx, args[0])
				if err != nil {
					if ctx.Err() != nil {
						return interrupted(ctx, "")
					}
					return withCode(2, err)
				}
				if err := writeOutput(st, *out, args, func(w io.Writer) error { return analysis.WriteSurface(w, s) }); err != nil {
					return withCode(2, err)
				}
				if *out != "-" {
					fmt.Fprintf(st.err, "mcptape baseline: wrote %s: %s\n", *out, surfaceCounts(s))
				}
				return nil
			}
		},
	}
}

// surfaceCounts says how many entries of each kind s holds, and which
// kinds the tape never listed (unknown, not none).
func surfaceCounts(s *analysis.Surface) string {
	var known, unknown []string
	for _, k := range []struct {
		kind, noun string
		n          int
	}{
		{analysis.KindTool, "tool", len(s.Tools)}, {analysis.KindPrompt, "prompt", len(s.Prompts)},
		{analysis.KindResource, "resource", len(s.Resources)}, {analysis.KindTemplate, "template", len(s.Templates)},
	} {
		if slices.Contains(s.Listed, k.kind) {
			known = append(known, english.Count(k.n, k.noun))
		} else {
			unknown = append(unknown, english.Noun(2, k.noun))
		}
	}
	out := strings.Join(known, ", ")
	if len(unknown) > 0 {
		out = strings.TrimPrefix(out+"; ", "; ") + "never listed (unknown): " + strings.Join(unknown, ", ")
	}
	return out
}
