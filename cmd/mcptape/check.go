package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcptape/mcptape/analysis"
	"github.com/mcptape/mcptape/check"
	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/internal/fileext"
)

func checkCmd() *command {
	return &command{
		name:    "check",
		summary: "CI gate: fail when tapes show selected problems or break assertions",
		usage:   "check TAPE... [--fail-on SIGNALS] [--expect-tool NAME] [--threshold SPEC] [--format text|json|junit]",
		examples: `  mcptape check run.jsonl.zst                       # violations, unanswered, cut tape: exit 1
  mcptape check *.jsonl.zst --fail-on error,tool-error,violation,unanswered
  mcptape check tapes/                              # a directory: its tapes; a rotated recording's are one tape
  mcptape check run.jsonl.zst --expect-tool search --forbid-tool delete_all \
      --max-duration 'tools/call search:2s' --threshold 'tools/call:p99<500ms' --threshold 'errors<1%'
  mcptape check run.jsonl.zst --baseline surface.json    # drift: a removed tool, a new required argument
  mcptape check run.jsonl.zst --format junit -o check.xml  # for GitHub Actions and GitLab

  Signals: error (JSON-RPC error responses, HTTP refusals other than 401),
  tool-error (isError results), violation (protocol rules), unanswered (also
  a response the server broke off; not a request the recorder's shutdown
  cut or the client left unanswered by ending the session), cancelled,
  abandoned (an MRTR operation whose last answer asked for input, never
  retried), unfinished (a task with no terminal status or result seen),
  slow (a client request slower than --slow), deprecated (protocol
  2024-11-05, batches), incomplete (a cut tape, messages recorded cut or not
  recorded), drift (a breaking change from --baseline). Default --fail-on:
  violation,unanswered,incomplete,drift; the others are listed as notes
  (abandoned and unfinished too: a user who declines to give input, a client
  that stops polling, is no server fault; select them to gate on them).
  Several tapes are one run: --expect-tool holds when any session called the
  tool; the other checks are per tape or per session (a tape's sessions
  beyond the first 1000 are checked together, in one case per check named
  "[N more sessions]": the verdict covers every session). A directory stands
  for its tapes (*.jsonl.zst), as for inspect; the tapes of one rotated
  recording (NAME-000001-TIME.jsonl.zst, -000002-, ...; in a directory or
  given one by one) are one tape, read joined in number order: a request
  answered after a rotation is answered, --baseline compares the whole
  recording's surface, and the cases are the recording's, named after its
  first tape. --threshold uses the
  syntax of mcptape load (series: a client method, or "tools/call NAME"; no
  p99.9); errors<F% is the client's failed requests (error, isError, HTTP
  refusal but 401) of the client's requests, the server's own requests
  (answered or not) in neither. --max-duration DUR bounds each session; SERIES:DUR each request of
  the series.
  Without --format, -o's extension picks the format (.xml junit, .json json,
  .txt or none text); with it, -o must have its extension or none.
  Exit code: 0 passed, 1 a selected signal fired or an assertion failed, 2 a
  usage error or a tape that cannot be read.
`,
		setup: func(fs *pflag.FlagSet) runFunc {
			failOn := fs.String("fail-on", strings.Join(check.DefaultFailOn, ","), "`SIGNALS` that fail the check, comma-separated ("+strings.Join(check.Signals, ", ")+"; all; none)")
			expect := fs.StringArray("expect-tool", nil, "fail unless some session called the tool `NAME` (repeatable)")
			forbid := fs.StringArray("forbid-tool", nil, "fail when a session called the tool `NAME` (repeatable)")
			maxDur := fs.StringArray("max-duration", nil, "`[SERIES:]DUR`: every session lasts at most DUR, or every request of SERIES (repeatable)")
			thresholds := fs.StringArray("threshold", nil, "`SPEC` as in mcptape load, per tape: 'tools/call search:p99<2s', 'errors<1%' (repeatable)")
			slow := fs.Duration("slow", check.DefaultSlow, "a client request slower than `DUR` fires the slow signal")
			baseline := fs.String("baseline", "", "compare each tape's tools, prompts and resources with the surface in `FILE` (mcptape baseline, or a tape)")
			format := fs.String("format", "text", "output `FORMAT`: text, json or junit; without it, -o's extension picks it (.xml junit, .json json)")
			out := fs.StringP("output", "o", "-", "write the result to `FILE` (- for stdout)")
			outputFlag(fs, "output", false)
			return func(ctx context.Context, st *stdio, args []string) error {
				if len(args) == 0 {
					return usageError("no tape given (usage: mcptape %s)", "check TAPE...")
				}
				write, err := checkWriter(*format, fs.Changed("format"), *out, args)
				if err != nil {
					return err
				}
				opts := []check.Option{check.WithSlow(*slow)}
				// add checks the option of a flag at once: a bad value is
				// a usage error that names the flag
				add := func(flag, value string, opt check.Option) error {
					if err := check.CheckOptions(opt); err != nil {
						return flagValueError(flag, value, err)
					}
					opts = append(opts, opt)
					return nil
				}
				if err := add("fail-on", *failOn, check.WithFailOn(signalList(*failOn)...)); err != nil {
					return err
				}
				for _, f := range []struct {
					flag   string
					values []string
					opt    func(string) check.Option
				}{{"expect-tool", *expect, check.WithExpectTool}, {"forbid-tool", *forbid, check.WithForbidTool},
					{"max-duration", *maxDur, check.WithMaxDuration}, {"threshold", *thresholds, check.WithThreshold}} {
					for _, v := range f.values {
						if err := add(f.flag, v, f.opt(v)); err != nil {
							return err
						}
					}
				}
				if *baseline != "" {
					b, err := analysis.LoadSurface(ctx, *baseline)
					if err != nil {
						return withCode(2, fmt.Errorf("--baseline: %w", err))
					}
					opts = append(opts, check.WithBaseline(b))
				}
				return runCheck(ctx, st, args, *out, write, opts)
			}
		},
	}
}

// checkFormats are the formats of check's result: --format's name, what
// it is, and the extension of -o that names it.
var checkFormats = []struct {
	name, what, ext string
	write           func(io.Writer, *check.Result) error
}{
	{"text", "text", ".txt", check.WriteText},
	{"json", "JSON", ".json", check.WriteJSON},
	{"junit", "JUnit XML", ".xml", check.WriteJUnit},
}

// checkWriter returns the writer of check's result in format (given: by
// --format, else the default text) to out, the -o file written from the
// tapes of inputs. Without --format, an -o with an extension picks the
// format (check.xml: junit); with it, the extension must be the format's:
// -o check.xml with the default text wrote text into a .xml file. A name
// without an extension, and stdout, take the format as it is.
func checkWriter(format string, given bool, out string, inputs []string) (func(io.Writer, *check.Result) error, error) {
	exts := make([]fileext.Ext[string], len(checkFormats))
	for i, f := range checkFormats {
		exts[i] = fileext.Ext[string]{Ext: f.ext, Format: f.name}
	}
	if !given && out != "-" && filepath.Ext(filepath.Base(out)) != "" && !isSpecialFile(out) {
		if err := refuseInputAsOutput(out, inputs); err != nil {
			return nil, err
		}
		f, err := fileext.Pick(out, exts...)
		if err != nil {
			return nil, usageError("-o: %v (for text, json or junit; or give --format)", err)
		}
		format = f
	}
	for _, f := range checkFormats {
		if f.name == format {
			if given {
				if err := checkOutputFits(out, inputs, "--format "+f.name+" writes "+f.what, f.ext); err != nil {
					return nil, err
				}
			}
			return f.write, nil
		}
	}
	return nil, usageError("--format %q: want text, json or junit", format)
}

// signalList splits a --fail-on value; "all" and "none" name every signal
// and none.
func signalList(s string) []string {
	switch strings.TrimSpace(s) {
	case "all":
		return check.Signals
	case "none", "":
		return nil
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// runCheck checks the tapes of args as one run: a directory stands for its
// tapes, and the tapes of one rotated recording are one tape, read joined
// (groupTapes, as inspect reads them).
func runCheck(ctx context.Context, st *stdio, args []string, out string, write func(io.Writer, *check.Result) error, opts []check.Option) error {
	start := time.Now()
	groups, err := groupTapes(st, args, false) // tapes.go
	if err != nil {
		return withCode(2, err)
	}
	var tapes []check.Tape
	var paths []string // every file read
	for _, g := range groups {
		tapes = append(tapes, check.Tape{Name: joinedName(g), Paths: g})
		paths = append(paths, g...)
	}
	res, err := check.RunTapes(ctx, tapes, opts...)
	if err != nil {
		if ctx.Err() != nil {
			return interrupted(ctx, "")
		}
		return usageError("%v", err)
	}
	if err := writeOutput(st, out, paths, func(w io.Writer) error { return write(w, res) }); err != nil {
		return withCode(2, err)
	}
	for _, e := range res.Errors {
		fmt.Fprintf(st.err, "mcptape check: %s: %s\n", e.Tape, e.Error)
	}
	if out != "-" {
		fmt.Fprintf(st.err, "mcptape check: wrote %s: %s, %d failed (%v)\n", out, english.Count(len(res.Cases), "check"), res.Failures, time.Since(start).Round(time.Millisecond))
	}
	switch {
	case len(res.Errors) > 0:
		return withCode(2, nil)
	case res.Failed():
		return withCode(1, nil)
	}
	return nil
}
