package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/mcptape/mcptape/analysis"
	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/tape"
)

// runExportRequests writes the requests table of the tapes at paths ("-"
// for stdin, once; a directory for its tapes, a rotated recording's read
// as one) to out (or stdout for "-"), in the format out's extension names.
// A failed export leaves no output file behind.
func runExportRequests(ctx context.Context, st *stdio, paths []string, out string) error {
	if len(paths) == 0 {
		return usageError("want at least one tape (usage: mcptape export TAPE... --format requests [-o FILE])")
	}
	if out != "" && out != "-" { // the tape as -o is the first thing to say
		if err := refuseInputAsOutput(out, paths); err != nil {
			return err
		}
	}
	f, err := analysis.RequestsFormatFor(out)
	if err != nil {
		return usageError("-o: %v", err)
	}
	groups, err := groupTapes(st, paths, false) // tapes.go
	if err != nil {
		return withCode(2, err)
	}
	defer tuneGC(analysis.RecommendedGCPercent)()
	var stats analysis.RequestsStats
	err = writeOutput(st, out, paths, func(w io.Writer) error {
		rw, err := analysis.NewRequestsWriter(w, f)
		if err != nil {
			return err
		}
		stdinUsed := false
		for _, g := range groups {
			if err = addRequestsTape(ctx, st, rw, g, &stdinUsed); err != nil {
				break
			}
		}
		var cerr error
		stats, cerr = rw.Close()
		return errors.Join(err, cerr)
	})
	if err != nil {
		if ctx.Err() != nil {
			return interrupted(ctx, "")
		}
		return withCode(2, err)
	}
	for _, w := range stats.Warnings {
		fmt.Fprintf(st.err, "mcptape export: warning: %v\n", w)
	}
	if out != "-" {
		fmt.Fprintf(st.err, "mcptape export: wrote %s of %s (%s) to %s\n", english.Count(stats.Rows, "request"), english.Count(stats.Tapes, "tape"),
			english.Count(stats.Messages, "message"), out)
	}
	return nil
}

// addRequestsTape adds the rows of the tapes of one recording (a group of
// groupTapes) to rw.
func addRequestsTape(ctx context.Context, st *stdio, rw *analysis.RequestsWriter, group []string, stdinUsed *bool) error {
	var r *tape.Reader
	var err error
	path := group[0]
	if path == "-" {
		if *stdinUsed {
			return fmt.Errorf("-: stdin named twice")
		}
		*stdinUsed = true
		r, err = openStdinTape(st.in)
	} else {
		r, err = tape.OpenJoined(group)
	}
	if err != nil {
		return err
	}
	defer r.Close()
	return rw.Add(ctx, analysis.RequestsTape{Name: path, Reader: r})
}
