package main

import (
	"context"
	"io"
	"os"

	"github.com/mcptape/mcptape/internal/privfile"
)

// output is where a subcommand writes its result: stdout for "-", else a
// file created with mode 0600 that a failed run removes.
type output struct {
	W    io.Writer
	path string
	file *os.File
}

// openOutput opens out ("-" for stdout).
func openOutput(stdout io.Writer, out string) (*output, error) {
	if out == "-" {
		return &output{W: stdout, path: out}, nil
	}
	f, err := privfile.Create(out)
	if err != nil {
		return nil, withCode(2, err)
	}
	return &output{W: f, path: out, file: f}, nil
}

// finish closes the file, removing it when err (the run's) or the close
// failed, and returns the error to exit with: code 130 when ctx was
// cancelled, 2 otherwise, nil when all went well.
func (o *output) finish(ctx context.Context, err error) error {
	if o.file != nil {
		if cerr := o.file.Close(); err == nil && cerr != nil {
			err = cerr
		}
		if err != nil {
			os.Remove(o.path)
		}
	}
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return withCode(130, ctx.Err())
	}
	return withCode(2, err)
}
