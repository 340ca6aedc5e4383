package main

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mcptape/mcptape/internal/fileext"
	"github.com/mcptape/mcptape/internal/privfile"
	"github.com/mcptape/mcptape/tape"
)

// writeOutput runs write on out: a file created 0600, or stdout for "-"
// or "". A failed write leaves no file behind (a device or a pipe it
// wrote to is left alone). An out that is one of the inputs is refused.
func writeOutput(st *stdio, out string, inputs []string, write func(io.Writer) error) error {
	if out == "" || out == "-" {
		return write(st.out)
	}
	if err := refuseInputAsOutput(out, inputs); err != nil {
		return err
	}
	file, err := privfile.Create(out)
	if err != nil {
		return withCode(2, err)
	}
	err = write(file)
	if cerr := file.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		privfile.Remove(out)
	}
	return err
}

// refuseInputAsOutput returns a usage error when the output file out is
// one of the input files: writing it would truncate the tape being read
// (and a failed write would then delete it).
func refuseInputAsOutput(out string, inputs []string) error {
	oi, err := os.Stat(out)
	if err != nil {
		return nil // a new file
	}
	for _, in := range inputs {
		if ii, err := os.Stat(in); err == nil && os.SameFile(oi, ii) {
			if filepath.Clean(in) == filepath.Clean(out) {
				return usageError("-o %s is the input itself: write to another file", out)
			}
			return usageError("-o %s is the input %s under another name: write to another file", out, in)
		}
	}
	return nil
}

// outputAnnotation marks the flags that name an output of their command
// (outputFlag, tapeOutputFlag); its values are the kind ("file", "dir" or
// "tape") and the words that are no path (such as discard).
const outputAnnotation = "mcptape-output"

// outputFlag marks the flag name of fs as an output path of its command:
// a file, or with dir a directory made with its parents. execute checks
// every output flag given (checkOutputs) before the command runs, so that
// a typo in one is found before any other output is created or
// truncated. "-" (stdout) passes, as do the keywords; "" given does not.
func outputFlag(fs *pflag.FlagSet, name string, dir bool, keywords ...string) {
	kind := "file"
	if dir {
		kind = "dir"
	}
	if err := fs.SetAnnotation(name, outputAnnotation, append([]string{kind}, keywords...)); err != nil {
		panic(err) // a flag of ours misnamed: a bug, found by every test
	}
}

// tapeOutputFlag marks the flag name of fs as the path of a tape its
// command writes (record, replay, mock -o): an output file (outputFlag)
// that must also be named as tapes are (checkTapeName).
func tapeOutputFlag(fs *pflag.FlagSet, name string) {
	if err := fs.SetAnnotation(name, outputAnnotation, []string{"tape"}); err != nil {
		panic(err) // a flag of ours misnamed: a bug, found by every test
	}
}

// checkOutputs checks the output flags of fs that were given (outputFlag)
// and returns the usage error of the first that is empty (given as "":
// no default is taken for it, nor stdout), cannot be written
// (checkOutputPath) or, for a tape, is not named as one (checkTapeName).
// Nothing is truncated or left behind: it looks, opens
// an existing file for writing, and creates and removes a probe file
// where a new one is to go.
func checkOutputs(fs *pflag.FlagSet) error {
	var err error
	fs.Visit(func(f *pflag.Flag) {
		a, ok := f.Annotations[outputAnnotation]
		if !ok || err != nil || slices.Contains(a[1:], f.Value.String()) {
			return
		}
		name := "--" + f.Name
		if f.Shorthand != "" {
			name = "-" + f.Shorthand
		}
		if f.Value.String() == "" { // -o "": a path lost to the shell (an unset variable)
			want := "a FILE"
			if a[0] == "dir" {
				want = "a DIR"
			}
			if len(a) > 1 {
				want = strings.Join(a[1:], ", ") + " or " + want
			}
			err = usageError("%s is empty: want %s", name, want)
			return
		}
		err = checkOutputPath(name, f.Value.String(), a[0] == "dir")
		if err == nil && a[0] == "tape" {
			err = checkTapeName(name, f.Value.String())
		}
	})
	return err
}

// checkTapeName returns a usage error when path, a tape a command is to
// write (flag names it), is not named *.jsonl.zst (tape.Ext): the tape
// would be a zstd stream under a name that says otherwise (-o t.jsonl:
// not JSON lines to jq), and every command given a directory (inspect,
// check, prune, mock, replay) reads only the files named so, passing it
// over. The error suggests the name to give. "-" passes (the command
// says what it does with it), as does an existing file that is no
// regular file (a pipe, /dev/null): it keeps no name.
func checkTapeName(flag, path string) error {
	if path == "-" || strings.HasSuffix(filepath.Base(path), tape.Ext) {
		return nil
	}
	if isSpecialFile(path) {
		return nil
	}
	return usageError("%s %s: a tape is zstd-compressed JSON lines named *%s, the only files a directory given to inspect, check, prune, mock or replay is read for: give %s %s",
		flag, path, tape.Ext, flag, tapeNameFor(path))
}

// tapeNameFor returns path named as a tape: the extensions of a JSON
// lines or zstd file it ends in (t.jsonl, t.zst, t.json.zst) replaced by
// tape.Ext.
func tapeNameFor(path string) string {
	dir, base := filepath.Split(path)
	for _, exts := range [][]string{{".zst", ".zstd"}, {".jsonl", ".ndjson", ".json"}} {
		for _, e := range exts {
			if len(base) > len(e) && strings.EqualFold(base[len(base)-len(e):], e) {
				base = base[:len(base)-len(e)]
				break
			}
		}
	}
	return dir + base + tape.Ext
}

// checkOutputPath returns a usage error when path, an output of a command
// (flag names it), cannot be written: a directory where a file is wanted
// (or a file where a directory is), or a file in a directory that does not
// exist or is no directory (a directory wanted is made with its parents:
// the nearest that exists must be a directory), or a place where nothing
// can be written (permission, a read-only file system); so that no run is spent,
// nor another output truncated, to lose it to a typo. "" and "-" (stdout)
// pass.
func checkOutputPath(flag, path string, dir bool) error {
	if path == "" || path == "-" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil {
		switch {
		case dir && !fi.IsDir():
			return usageError("%s %s: not a directory", flag, path)
		case !dir && fi.IsDir():
			return usageError("%s %s: is a directory", flag, path)
		case dir:
			return checkWritableDir(flag, path, path)
		case fi.Mode().IsRegular():
			return checkWritableFile(flag, path)
		}
		return nil // a device or a pipe: opening it may block, or mean something
	}
	parent := filepath.Dir(path)
	if dir { // the nearest that exists
		for _, err := os.Stat(parent); err != nil && parent != filepath.Dir(parent); _, err = os.Stat(parent) {
			parent = filepath.Dir(parent)
		}
	}
	fi, err := os.Stat(parent)
	switch {
	case err != nil:
		return usageError("%s %s: no directory %s to write it in", flag, path, parent)
	case !fi.IsDir():
		return usageError("%s %s: %s is not a directory", flag, path, parent)
	}
	return checkWritableDir(flag, path, parent)
}

// checkWritableDir returns a usage error when no file can be created in
// dir, the directory that will hold path (flag's value): a file is
// created there and removed at once (a probe named .mcptape-probe-*), as
// permission bits alone do not tell (root, access lists, read-only file
// systems).
func checkWritableDir(flag, path, dir string) error {
	f, err := os.CreateTemp(dir, ".mcptape-probe-*")
	if err != nil {
		return usageError("%s %s: cannot write in %s: %v", flag, path, dir, pathErrorCause(err))
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// checkWritableFile returns a usage error when the existing regular file
// path (flag's value) cannot be opened for writing; it is opened without
// being truncated, and closed.
func checkWritableFile(flag, path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return usageError("%s %s: cannot write it: %v", flag, path, pathErrorCause(err))
	}
	f.Close()
	return nil
}

// pathErrorCause returns the cause of err without the operation and path
// that an *fs.PathError repeats ("permission denied").
func pathErrorCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// checkOutputFits returns a usage error when out, the -o file of a
// command, is one of its inputs (refuseInputAsOutput, said first) or has
// an extension other than exts, those of the one format it writes, what
// names ("report writes HTML"): -o r.pdf got HTML. A name without an
// extension fits (fileext.Fit); "" and "-" (stdout) pass, as does an
// existing file that is no regular file (a pipe, a device).
func checkOutputFits(out string, inputs []string, what string, exts ...string) error {
	if out == "" || out == "-" {
		return nil
	}
	if err := refuseInputAsOutput(out, inputs); err != nil {
		return err
	}
	if err := fileext.Fit(out, exts...); err != nil && !isSpecialFile(out) {
		return usageError("-o: %v (%s)", err, what)
	}
	return nil
}

// isSpecialFile reports whether path exists and is no regular file nor
// directory (a pipe, a device): its name says nothing of what is written
// there.
func isSpecialFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.Mode().IsRegular() && !fi.IsDir()
}
