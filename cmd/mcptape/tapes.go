package main

// Tape arguments of the offline commands: a tape file, "-" for stdin, a
// directory standing for the tapes in it, or several of these read as one
// (tape.OpenJoined: a rotated recording's tapes in order, several
// recordings merged with their sessions kept apart).

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/tape"
)

// expandTapes replaces each directory in args by the tapes (*.jsonl.zst)
// directly in it, in name order.
func expandTapes(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		fi, err := os.Stat(a)
		if a == "-" || err != nil || !fi.IsDir() {
			out = append(out, a) // opening it says what is wrong
			continue
		}
		ents, err := os.ReadDir(a)
		if err != nil {
			return nil, err
		}
		var names []string
		for _, e := range ents {
			if !e.IsDir() && strings.HasSuffix(e.Name(), tape.Ext) {
				names = append(names, filepath.Join(a, e.Name()))
			}
		}
		if len(names) == 0 {
			return nil, fmt.Errorf("%s: a directory without tapes (*%s)", a, tape.Ext)
		}
		sort.Strings(names)
		out = append(out, names...)
	}
	return out, nil
}

// openTapes opens args as one tape: "-" alone is stdin, one file is
// opened as it is, anything else is joined. name is what messages call it.
func openTapes(st *stdio, args []string) (r *tape.Reader, name string, err error) {
	if len(args) == 1 && args[0] == "-" {
		r, err = openStdinTape(st.in)
		return r, "-", err
	}
	paths, err := expandTapes(args)
	if err != nil {
		return nil, "", err
	}
	for _, p := range paths {
		if p == "-" {
			return nil, "", fmt.Errorf("-: stdin is read alone, not joined with other tapes")
		}
	}
	r, err = tape.OpenJoined(paths)
	return r, joinedName(paths), err
}

// joinedName is what messages call the tapes at paths read as one: the
// first, "and N more tapes".
func joinedName(paths []string) string {
	if len(paths) == 1 {
		return paths[0]
	}
	return paths[0] + " and " + english.Count(len(paths)-1, "more tape")
}

// groupTapes expands args (expandTapes) into the tapes of each report:
// the tapes of one rotated series (same directory and name, see
// tape.SegmentName) together, every other tape alone; merge puts them all
// in one.
func groupTapes(args []string, merge bool) ([][]string, error) {
	paths, err := expandTapes(args)
	if err != nil {
		return nil, err
	}
	if merge {
		for _, p := range paths {
			if p == "-" {
				return nil, fmt.Errorf("-: stdin is read alone, not merged with other tapes")
			}
		}
		return [][]string{paths}, nil
	}
	var groups [][]string
	series := map[string]int{} // dir + name: index in groups
	for _, p := range paths {
		if name, _, _, ok := tape.ParseSegmentName(filepath.Base(p)); ok {
			key := filepath.Join(filepath.Dir(p), name)
			if i, seen := series[key]; seen {
				groups[i] = append(groups[i], p)
				continue
			}
			series[key] = len(groups)
		}
		groups = append(groups, []string{p})
	}
	return groups, nil
}
