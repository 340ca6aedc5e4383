package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/tape"
)

func pruneCmd() *command {
	return &command{
		name:    "prune",
		summary: "Delete old tapes from a directory (what record --keep does, by hand)",
		usage:   "prune DIR --older-than DUR [--dry-run]",
		examples: `  mcptape prune /var/lib/mcptape/tapes --older-than 168h --dry-run   # list what would go
  mcptape prune /var/lib/mcptape/tapes --older-than 168h

  Deletes the tapes (*.jsonl.zst) directly in DIR last written more than DUR ago,
  except the newest tape of each rotated recording (NAME-NUMBER-TIME.jsonl.zst),
  which a running 'mcptape record --rotate' may still be writing. Only mcptape's
  tapes are deleted: a file whose start is not a tape header written by mcptape
  (another tool's file or tape, anything else named *.jsonl.zst) is kept, and
  said so on stderr. Each deleted file is printed on stdout. Exit code: 0, 1
  when a file could not be deleted, 2 for a usage error or a directory that
  cannot be read.
`,
		setup: func(fs *pflag.FlagSet) runFunc {
			olderThan := fs.Duration("older-than", 0, "delete tapes last written more than `DUR` ago (required)")
			dryRun := fs.Bool("dry-run", false, "print what would be deleted, delete nothing")
			return func(ctx context.Context, st *stdio, args []string) error {
				if len(args) != 1 {
					return usageError("want one directory, got %d arguments (usage: mcptape prune DIR --older-than DUR [--dry-run])", len(args))
				}
				if *olderThan <= 0 {
					return usageError("--older-than DUR is required and must be positive")
				}
				return runPrune(st, args[0], *olderThan, *dryRun, time.Now())
			}
		},
	}
}

// runPrune deletes (or lists, when dryRun) the tapes of dir older than
// olderThan at now.
func runPrune(st *stdio, dir string, olderThan time.Duration, dryRun bool, now time.Time) error {
	victims, err := pruneCandidates(dir, olderThan, now)
	if err != nil {
		return withCode(2, err)
	}
	victims, skipped := onlyOurTapes(st, victims)
	if ents, err := os.ReadDir(dir); err == nil { // (read above: an error there returned)
		for _, m := range misnamedTapes(dir, ents) { // tapes.go: old ones it would have deleted
			if fi, err := os.Stat(m); err == nil && now.Sub(fi.ModTime()) > olderThan {
				fmt.Fprintf(st.err, "mcptape prune: warning: %s\n", misnamedNote(m))
			}
		}
	}
	var failed []error
	var bytes int64
	for _, v := range victims {
		if dryRun {
			fmt.Fprintf(st.out, "would delete %s\n", v.Path)
			bytes += v.Size
			continue
		}
		if err := os.Remove(v.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
			failed = append(failed, err)
			continue
		}
		fmt.Fprintf(st.out, "deleted %s\n", v.Path)
		bytes += v.Size
	}
	verb := "deleted"
	if dryRun {
		verb = "would delete"
	}
	kept := ""
	switch {
	case skipped == 1:
		kept = "; kept 1 old file that is not an mcptape tape"
	case skipped > 1:
		kept = "; kept " + english.Count(skipped, "old file") + " not made by mcptape"
	}
	fmt.Fprintf(st.err, "mcptape prune: %s %s, %s%s\n", verb, english.Count(len(victims)-len(failed), "tape"), english.Count(bytes, "byte"), kept)
	if len(failed) > 0 {
		return withCode(1, errors.Join(failed...))
	}
	return nil
}

// pruneCandidates lists the tapes of dir last written more than olderThan
// before now, sparing the newest tape of each rotated series.
func pruneCandidates(dir string, olderThan time.Duration, now time.Time) ([]tape.SegmentFile, error) {
	segs, err := tape.ListSeries(dir, "")
	if err != nil {
		return nil, err
	}
	var out []tape.SegmentFile
	for i := 0; i < len(segs); {
		j := i
		for j < len(segs) && segs[j].Name == segs[i].Name {
			j++
		}
		out = append(out, tape.Retain(segs[i:j], "", olderThan, 0, now)...)
		i = j
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		name := e.Name()
		if _, _, _, series := tape.ParseSegmentName(name); series || e.IsDir() || !strings.HasSuffix(name, tape.Ext) {
			continue
		}
		fi, err := e.Info()
		if err != nil || !fi.Mode().IsRegular() || now.Sub(fi.ModTime()) <= olderThan {
			continue
		}
		out = append(out, tape.SegmentFile{Path: filepath.Join(dir, name), Size: fi.Size(), ModTime: fi.ModTime()})
	}
	return out, nil
}

// onlyOurTapes returns the files of victims that are mcptape's tapes, as
// their first bytes say (tape.ReadHeader), and how many others it left
// out, each said on stderr.
func onlyOurTapes(st *stdio, victims []tape.SegmentFile) ([]tape.SegmentFile, int) {
	var ours []tape.SegmentFile
	skipped := 0
	for _, v := range victims {
		h, err := tape.ReadHeader(v.Path)
		why := ""
		switch {
		case err != nil:
			why = strings.TrimPrefix(strings.TrimPrefix(err.Error(), v.Path+": "), "tape: ")
		case h.Tool != tape.ToolName:
			why = fmt.Sprintf("a tape written by %q, not mcptape", h.Tool)
		default:
			ours = append(ours, v)
			continue
		}
		fmt.Fprintf(st.err, "mcptape prune: kept %s: %s\n", v.Path, why)
		skipped++
	}
	return ours, skipped
}
