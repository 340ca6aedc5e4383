package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/mcptape/mcptape/analysis"
	"github.com/mcptape/mcptape/tape"
)

// runExportRequests writes the requests table of the tapes at paths ("-"
// for stdin, once) to out (or stdout for "-"), in the format out's
// extension names. A failed export leaves no output file behind.
func runExportRequests(ctx context.Context, st *stdio, paths []string, out string) error {
	if len(paths) == 0 {
		return usageError("want at least one tape (usage: mcptape export TAPE... --format requests [-o FILE])")
	}
	defer tuneGC(analysis.RecommendedGCPercent)()
	f := analysis.RequestsFormatFor(out)
	if out == "-" {
		f = analysis.RequestsNDJSON
	}
	var stats analysis.RequestsStats
	err := writeOutput(st, out, paths, func(w io.Writer) error {
		rw, err := analysis.NewRequestsWriter(w, f)
		if err != nil {
			return err
		}
		stdinUsed := false
		for _, path := range paths {
			if err = addRequestsTape(ctx, st, rw, path, &stdinUsed); err != nil {
				break
			}
		}
		var cerr error
		stats, cerr = rw.Close()
		return errors.Join(err, cerr)
	})
	if err != nil {
		if ctx.Err() != nil {
			return withCode(130, ctx.Err())
		}
		return withCode(2, err)
	}
	for _, w := range stats.Warnings {
		fmt.Fprintf(st.err, "mcptape export: warning: %v\n", w)
	}
	if out != "-" {
		fmt.Fprintf(st.err, "mcptape export: wrote %d requests of %d tapes (%d messages) to %s\n", stats.Rows, stats.Tapes, stats.Messages, out)
	}
	return nil
}

// addRequestsTape adds the rows of the tape at path to rw.
func addRequestsTape(ctx context.Context, st *stdio, rw *analysis.RequestsWriter, path string, stdinUsed *bool) error {
	var r *tape.Reader
	var err error
	if path == "-" {
		if *stdinUsed {
			return fmt.Errorf("-: stdin named twice")
		}
		*stdinUsed = true
		r, err = openStdinTape(st.in)
	} else {
		r, err = tape.Open(path)
	}
	if err != nil {
		return err
	}
	defer r.Close()
	return rw.Add(ctx, analysis.RequestsTape{Name: path, Reader: r})
}
