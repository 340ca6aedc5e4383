package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/mcptape/mcptape/analysis"
	"github.com/mcptape/mcptape/internal/english"
)

func exportCmd() *command {
	return &command{
		name:    "export",
		summary: "Export a tape as HAR 1.2 (HTTP tapes), NDJSON of messages, OTLP/JSON traces, or a requests table",
		usage:   "export TAPE... --format har|ndjson|otlp [-o FILE]\n  mcptape export TAPE... --format requests [-o FILE.ndjson|.csv|.parquet]",
		examples: `  mcptape export run.jsonl.zst --format har -o run.har     # open in a browser's network panel
  mcptape export run.jsonl.zst --format ndjson | jq 'select(.kind=="response") | .latency_ns'
  zstdcat run.jsonl.zst | zstd | mcptape export - --format ndjson
  mcptape export run.jsonl.zst --format otlp -o trace.json   # for a tracing backend (OTLP/HTTP JSON)
  mcptape export tapes/*.jsonl.zst --format requests -o requests.parquet   # for DuckDB & co
  mcptape export tapes/ --format har -o all.har          # several tapes (or a directory) read as one

  HAR has one entry per HTTP exchange with the request and response bodies (event
  streams as their SSE text) and timings; it needs a tape recorded over HTTP.
  NDJSON has one object per message (as 'mcptape show --format ndjson', events
  left out). OTLP is one OTLP/JSON trace document: a span per request and
  response (method, tool, status, error code), MRTR rounds and task polls under
  one span per operation, a request's _meta.traceparent and tracestate honoured,
  otherwise one trace per session. The requests table has one row per logical
  operation of any number of tapes, paired as 'mcptape inspect' pairs them:
  by -o's extension: .ndjson, .jsonl or .json (and stdout) for NDJSON, .csv,
  .parquet; any other name is a usage error (columns:
  docs/requests-format.md; queries: docs/sql.md). For the others -o must
  fit the format, or have no extension: har .har or .json, ndjson .ndjson,
  .jsonl or .json, otlp .json (-o trace.csv with otlp is a usage error). Output files are created with mode 0600: tapes hold other people's
  data. Exit code: 0, or 2 on error.
`,
		setup: func(fs *pflag.FlagSet) runFunc {
			format := fs.String("format", "", "output `FORMAT`: har, ndjson, otlp or requests (required)")
			out := fs.StringP("output", "o", "-", "write to `FILE` (mode 0600) instead of stdout")
			outputFlag(fs, "output", false)
			return func(ctx context.Context, st *stdio, args []string) error {
				if *format == "requests" {
					return runExportRequests(ctx, st, args, *out)
				}
				if len(args) == 0 {
					return usageError("no tape given (usage: mcptape export TAPE... --format har|ndjson|otlp [-o FILE])")
				}
				if *format == "" {
					return usageError("--format is required: har, ndjson, otlp or requests")
				}
				f, err := analysis.ParseExportFormat(*format)
				if err != nil { // (requests is taken above)
					return usageError("--format %q: want har, ndjson, otlp or requests", *format)
				}
				if err := checkOutputFits(*out, args, "--format "+*format+" writes "+exportWrites[f].what, exportWrites[f].exts...); err != nil {
					return err
				}
				return runExport(ctx, st, args, *out, f)
			}
		},
	}
}

// exportWrites says what each format of export writes, and the names of
// its -o (checkOutputFits); the requests table's format follows -o's
// extension instead (analysis.RequestsFormatFor).
var exportWrites = map[analysis.ExportFormat]struct {
	what string
	exts []string
}{
	analysis.ExportHAR:    {"HAR (JSON)", []string{".har", ".json"}},
	analysis.ExportNDJSON: {"JSON lines", []string{".ndjson", ".jsonl", ".json"}},
	analysis.ExportOTLP:   {"OTLP/JSON", []string{".json"}},
}

// runExport exports the tapes of args, read as one (or stdin for "-"), to
// out (or stdout for "-"). A failed export leaves no output file behind.
func runExport(ctx context.Context, st *stdio, args []string, out string, f analysis.ExportFormat) error {
	r, path, err := openTapes(st, args) // tapes.go: several are joined
	if err != nil {
		return withCode(2, err)
	}
	defer r.Close()
	var stats analysis.ExportStats
	err = writeOutput(st, out, args, func(w io.Writer) (err error) {
		stats, err = analysis.ExportTape(ctx, r, w, f)
		return err
	})
	var outErr *exitError // about the output file (writeOutput), not the tape
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return interrupted(ctx, "")
	case errors.As(err, &outErr):
		return err
	default:
		return withCode(2, fmt.Errorf("%s: %w", path, err))
	}
	if stats.Warning != nil {
		fmt.Fprintf(st.err, "mcptape export: warning: %v\n", stats.Warning)
	}
	if out != "-" {
		what := english.Count(stats.Messages, "message")
		switch f {
		case analysis.ExportHAR:
			what = english.Count(stats.Entries, "HTTP exchange")
		case analysis.ExportOTLP:
			what = english.Count(stats.Entries, "span")
		}
		fmt.Fprintf(st.err, "mcptape export: wrote %s to %s\n", what, out)
	}
	return nil
}
