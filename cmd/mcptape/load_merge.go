package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/mcptape/mcptape/loadgen"
)

// runReportMerge runs "mcptape report merge A.json B.json ... [--json OUT]
// [--threshold T]...": it merges the JSON reports of load runs made at the
// same time by several generators (histograms merged exactly), prints the
// merged text report and checks the thresholds (exit code 3 when one is
// broken). "-" reads a report from stdin.
func runReportMerge(_ context.Context, st *stdio, args []string) error {
	fs := pflag.NewFlagSet("report merge", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	jsonOut := fs.String("json", "", "write the merged report as JSON to `FILE` (- for stdout)")
	thresholds := fs.StringArray("threshold", nil, "fail with exit code 3 unless `T` holds (repeatable)")
	hgrm := fs.String("hgrm", "", "write one percentile distribution file per merged series into `DIR`")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintf(st.out, "Merge load reports of several generators\n\nUsage:\n  mcptape report merge A.json B.json ... [--json OUT] [--hgrm DIR] [--threshold T]...\n\nFlags:\n%s", fs.FlagUsages())
			return errHelp
		}
		return usageError("report merge: %v", err)
	}
	th, err := parseThresholds(*thresholds)
	if err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return usageError("report merge: give the JSON reports to merge")
	}
	var reports []*loadgen.Report
	for _, path := range fs.Args() {
		rep, err := readReportFile(st, path)
		if err != nil {
			return withCode(2, err)
		}
		reports = append(reports, rep)
	}
	merged, err := loadgen.Merge(reports...)
	if err != nil {
		return withCode(2, err)
	}
	if *hgrm != "" {
		if err := merged.WriteHgrmDir(*hgrm); err != nil {
			return err
		}
	}
	return emitReport(st, merged, *jsonOut, th)
}

// readReportFile reads one JSON load report, "-" meaning stdin.
func readReportFile(st *stdio, path string) (*loadgen.Report, error) {
	if path == "-" {
		rep, err := loadgen.ReadReport(st.in)
		if err != nil {
			return nil, fmt.Errorf("stdin: %w", err)
		}
		return rep, nil
	}
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	defer fh.Close()
	rep, err := loadgen.ReadReport(fh)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rep, nil
}
