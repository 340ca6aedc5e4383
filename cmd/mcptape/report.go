package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/mcptape/mcptape/analysis"
	"github.com/mcptape/mcptape/internal/english"
)

func reportCmd() *command {
	return &command{
		name:    "report",
		summary: "Write a self-contained HTML report of a tape, or of load runs (charts, errors, violations)",
		usage:   "report TAPE... -o report.html\n  mcptape report RUN.json [RUN2.json...] -o load.html\n  mcptape report merge A.json B.json... [--json OUT] [--threshold T]... [--hgrm DIR]",
		examples: `  mcptape report run.jsonl.zst -o report.html     # open report.html in any browser, offline
  mcptape report run.jsonl.zst -o - > report.html
  mcptape report pod-a/ pod-b/ -o all.html         # several tapes as one, sessions kept apart by proxy
  mcptape report merge gen-0.json gen-1.json gen-2.json --json all.json   # merge load reports exactly
  mcptape report run.json -o load.html               # a load run (mcptape load --json run.json)
  mcptape report before.json after.json -o cmp.html  # load runs overlaid, changes against the first

  A file is a load report when it is a JSON object with "model" and "series"
  members (what mcptape load --json writes); anything else is read as a tape.
  A load report's page shows the latency percentiles over time (p50, p90,
  p99, max per interval), throughput (ok/s) and requests not ok over time
  (each request counted once, as in load's text report) with the stages or
  capacity-search steps marked, the latency by percentile per series on the
  HdrHistogram plotter's log scale, the capacity search, the error reasons and
  the configuration. Two or more runs are overlaid, with the change of p50,
  p99 and throughput per series against the first.

  The report holds the sessions (with their requests refused with an HTTP
  error and broken off, when any), a timeline of requests per session, latency
  histograms per method and per tool, the errors and the protocol violations.
  It is one HTML file with inline CSS and SVG: no script, nothing fetched. It is
  created with mode 0600 (tapes hold other people's data). -o names it .html or
  .htm (or with no extension): -o r.pdf is a usage error. Exit code: 0, or 2 on
  error.
`,
		subcommands: map[string]*command{"merge": reportMergeCmd()},
		setup: func(fs *pflag.FlagSet) runFunc {
			out := fs.StringP("output", "o", "", "write the report to `FILE` (required; - for stdout)")
			outputFlag(fs, "output", false)
			maxTimeline := fs.Int("max-timeline", analysis.DefaultMaxTimeline, "requests drawn in the timelines (the first ones; an MRTR operation or a task is one)")
			title := fs.String("title", "", "report title (default: the tape's file name)")
			return func(ctx context.Context, st *stdio, args []string) error {
				if len(args) > 0 && isLoadReport(args[0]) {
					if *out == "" {
						return usageError("-o FILE is required (use -o - for stdout)")
					}
					if err := checkOutputFits(*out, args, reportWrites, reportExts...); err != nil {
						return err
					}
					for _, a := range args[1:] {
						switch isJSON, err := probeLoadReport(a); {
						case !isJSON && err != nil: // cannot be read
							return withCode(2, fmt.Errorf("report: %w", err))
						case !isJSON || err != nil:
							return usageError("%s is not a load report (JSON of mcptape load --json) like %s", a, args[0])
						}
					}
					return runLoadReport(st, args, *out, *title)
				}
				if len(args) == 0 {
					return usageError("no tape given (usage: mcptape report TAPE... -o report.html)")
				}
				for _, a := range args {
					if isJSON, err := probeLoadReport(a); isJSON && err != nil {
						return usageError("%s: not a load report (the JSON of mcptape load --json): %v", a, err)
					}
				}
				if *out == "" {
					return usageError("-o FILE is required (use -o - for stdout)")
				}
				if err := checkOutputFits(*out, args, reportWrites, reportExts...); err != nil {
					return err
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

// reportWrites says what report writes, and reportExts are the names of
// its -o (checkOutputFits).
const reportWrites = "report writes HTML"

var reportExts = []string{".html", ".htm"}

// runReport writes the HTML report of the tapes of args, read as one, to
// out (or stdout for "-"). A failed report leaves no file behind.
func runReport(ctx context.Context, st *stdio, args []string, out string, opts ...analysis.HTMLOption) error {
	r, _, err := openTapes(st, args) // tapes.go: several are joined, sessions kept apart by proxy
	if err != nil {
		return withCode(2, err)
	}
	defer r.Close()
	var rep *analysis.Report
	err = writeOutput(st, out, args, func(w io.Writer) (err error) {
		rep, err = analysis.WriteHTMLReportTape(ctx, r, w, opts...)
		return err
	})
	if err != nil {
		if ctx.Err() != nil {
			return interrupted(ctx, "")
		}
		return withCode(2, err)
	}
	if rep.Tape.Warning != "" {
		fmt.Fprintf(st.err, "mcptape report: warning: %s\n", rep.Tape.Warning)
	}
	if out != "-" {
		fmt.Fprintf(st.err, "mcptape report: wrote %s (%s, %s, %s)\n", out, english.Count(len(rep.Sessions)+rep.SessionsFolded, "session"),
			english.Count(rep.Tape.Messages, "message"), english.Count(len(rep.Problems), "problem"))
	}
	return nil
}
