package main

import (
	"io"

	"github.com/mcptape/mcptape/internal/privfile"
)

// writeOutput runs write on out: a file created 0600, or stdout for "-"
// or "". A failed write leaves no file behind (a device or a pipe it
// wrote to is left alone).
func writeOutput(st *stdio, out string, write func(io.Writer) error) error {
	if out == "" || out == "-" {
		return write(st.out)
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
