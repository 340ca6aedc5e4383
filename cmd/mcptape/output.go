package main

import (
	"io"
	"os"
	"path/filepath"

	"github.com/mcptape/mcptape/internal/privfile"
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
			return usageError("-o %s is the input %s: write to another file", out, in)
		}
	}
	return nil
}

// checkOutputPath returns a usage error when path, an output written only
// once a run is over (flag names it), cannot be: a directory where a file
// is wanted (or a file where a directory is), or a file in a directory
// that does not exist; so that no run is spent to lose its report to a
// typo. "" and "-" (stdout) pass.
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
		}
		return nil
	}
	if dir {
		return nil // made with its parents
	}
	if fi, err := os.Stat(filepath.Dir(path)); err != nil || !fi.IsDir() {
		return usageError("%s %s: no directory %s to write it in", flag, path, filepath.Dir(path))
	}
	return nil
}
