package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/mcptape/mcptape/analysis"
)

func reportCmd() *command {
	return &command{
		name:    "report",
		summary: "Write a self-contained HTML report of a tape (charts, errors, violations)",
		usage:   "report TAPE... -o report.html\n  mcptape report merge A.json B.json... [--json OUT] [--threshold T]... [--hgrm DIR]",
		examples: `  mcptape report run.jsonl.zst -o report.html     # open report.html in any browser, offline
  mcptape report run.jsonl.zst -o - > report.html
  mcptape report pod-a/ pod-b/ -o all.html         # several tapes as one, sessions kept apart by proxy
  mcptape report merge gen-0.json gen-1.json gen-2.json --json all.json   # merge load reports exactly

  The report holds the sessions, a timeline of requests per session, latency
  histograms per method and per tool, the errors and the protocol violations.
  It is one HTML file with inline CSS and SVG: no script, nothing fetched. It is
  created with mode 0600 (tapes hold other people's data). Exit code: 0, or 2 on
  error.
`,
		subcommands: map[string]runFunc{"merge": runReportMerge},
		setup: func(fs *pflag.FlagSet) runFunc {
			out := fs.StringP("output", "o", "", "write the report to `FILE` (required; - for stdout)")
			maxTimeline := fs.Int("max-timeline", analysis.DefaultMaxTimeline, "requests drawn in the timelines (the first ones)")
			title := fs.String("title", "", "report title (default: the tape's file name)")
			return func(ctx context.Context, st *stdio, args []string) error {
				if len(args) == 0 {
					return usageError("no tape given (usage: mcptape report TAPE... -o report.html)")
				}
				if *out == "" {
					return usageError("-o FILE is required (use -o - for stdout)")
				}
				if *maxTimeline < 0 {
					return usageError("--max-timeline %d: want 0 or more", *maxTimeline)
				}
				t := *title
				if t == "" {
					t = filepath.Base(args[0])
				}
				return runReport(ctx, st, args, *out,
					analysis.WithTitle(t), analysis.WithMaxTimeline(*maxTimeline))
			}
		},
	}
}

// runReport writes the HTML report of the tapes of args, read as one, to
// out (or stdout for "-"). A failed report leaves no file behind.
func runReport(ctx context.Context, st *stdio, args []string, out string, opts ...analysis.HTMLOption) error {
	r, _, err := openTapes(st, args) // tapes.go: several are joined, sessions kept apart by proxy
	if err != nil {
		return withCode(2, err)
	}
	defer r.Close()
	var rep *analysis.Report
	err = writeOutput(st, out, func(w io.Writer) (err error) {
		rep, err = analysis.WriteHTMLReportTape(ctx, r, w, opts...)
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return withCode(130, ctx.Err())
		}
		return withCode(2, err)
	}
	if rep.Tape.Warning != "" {
		fmt.Fprintf(st.err, "mcptape report: warning: %s\n", rep.Tape.Warning)
	}
	if out != "-" {
		fmt.Fprintf(st.err, "mcptape report: wrote %s (%d sessions, %d messages, %d problems)\n",
			out, len(rep.Sessions)+rep.SessionsFolded, rep.Tape.Messages, len(rep.Problems))
	}
	return nil
}
