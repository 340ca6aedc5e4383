package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/mcptape/mcptape/loadgen"
)

// reportMergeCmd is "mcptape report merge A.json B.json ... [--json OUT]
// [--threshold T]...": it merges the JSON reports of load runs made at the
// same time by several generators (histograms merged exactly), prints the
// merged text report and checks the thresholds (exit code 3 when one is
// broken). "-" reads a report from stdin.
func reportMergeCmd() *command {
	return &command{
		name:    "report merge",
		summary: "Merge load reports of several generators",
		usage:   "report merge A.json B.json ... [--json OUT] [--hgrm DIR] [--threshold T]...",
		setup: func(fs *pflag.FlagSet) runFunc {
			jsonOut := fs.String("json", "", "write the merged report as JSON to `FILE` (- for stdout)")
			thresholds := fs.StringArray("threshold", nil, "fail with exit code 3 unless `T` holds (repeatable)")
			hgrm := fs.String("hgrm", "", "write one percentile distribution file per merged series into `DIR`")
			outputFlag(fs, "json", false)
			outputFlag(fs, "hgrm", true)
			return func(ctx context.Context, st *stdio, args []string) error {
				th, err := parseThresholds(*thresholds)
				if err != nil {
					return err
				}
				if len(args) == 0 {
					return usageError("report merge: give the JSON reports to merge")
				}
				var reports []*loadgen.Report
				for _, path := range args {
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
				return emitReport(ctx, st, merged, *jsonOut, th)
			}
		},
	}
}

// readReportFile reads one JSON load report, "-" meaning stdin. A file
// that holds no load report (a tape given by mistake) is named as such.
func readReportFile(st *stdio, path string) (*loadgen.Report, error) {
	in, name := st.in, "stdin"
	if path != "-" {
		fh, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		defer fh.Close()
		in, name = fh, path
	}
	rep, err := loadgen.ReadReport(in)
	if err != nil {
		return nil, fmt.Errorf("%s: not a load report (the JSON of mcptape load --json): %w", name, err)
	}
	return rep, nil
}
