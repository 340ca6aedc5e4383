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
// directly in it, in name order. The tapes in it under other names
// (misnamedTapes) are named on st.err, or in the error when it has no
// other.
func expandTapes(st *stdio, args []string) ([]string, error) {
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
		misnamed := misnamedTapes(a, ents)
		if len(names) == 0 {
			if len(misnamed) > 0 {
				return nil, fmt.Errorf("%s: a directory without tapes (*%s): %s", a, tape.Ext, misnamedNote(misnamed[0]))
			}
			return nil, fmt.Errorf("%s: a directory without tapes (*%s)", a, tape.Ext)
		}
		for _, m := range misnamed {
			commandLogf(st.err, st.cmd)("warning: %s", misnamedNote(m))
		}
		sort.Strings(names)
		out = append(out, names...)
	}
	return out, nil
}

// misnamedTapes returns the regular files of ents, the entries of dir, not
// named *.jsonl.zst that are mcptape's tapes, as their first bytes say
// (tape.ReadHeader): a directory is read for its *.jsonl.zst only, and
// these (renamed by hand, or written by an mcptape that did not refuse
// record -o t.jsonl) are named rather than passed over in silence.
func misnamedTapes(dir string, ents []os.DirEntry) []string {
	var out []string
	for _, e := range ents {
		if !e.Type().IsRegular() || strings.HasSuffix(e.Name(), tape.Ext) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if h, err := tape.ReadHeader(p); err == nil && h.Tool == tape.ToolName {
			out = append(out, p)
		}
	}
	return out
}

// misnamedNote says that the tape at path is passed over for its name.
func misnamedNote(path string) string {
	return fmt.Sprintf("%s is a tape not named *%s, passed over (rename it %s)", path, tape.Ext, filepath.Base(tapeNameFor(path)))
}

// openTapes opens args as one tape: "-" alone is stdin, one file is
// opened as it is, anything else is joined. name is what messages call it.
func openTapes(st *stdio, args []string) (r *tape.Reader, name string, err error) {
	if len(args) == 1 && args[0] == "-" {
		r, err = openStdinTape(st.in)
		return r, "-", err
	}
	paths, err := expandTapes(st, args)
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
func groupTapes(st *stdio, args []string, merge bool) ([][]string, error) {
	paths, err := expandTapes(st, args)
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
