package main

import (
	"fmt"
	"os"
	"time"

	"github.com/mcptape/mcptape/capture"
	"github.com/mcptape/mcptape/tape"
)

// createOutputTape creates the tape at path on which command name (replay,
// mock) records its own session (-o), its header naming the transport kind
// and target. Like record's -o, an existing file is refused (exit code 2)
// unless force is set. The returned function closes the tape, reporting a
// close error on stderr.
func createOutputTape(st *stdio, name, path string, force bool, kind, target string) (*tape.Writer, func(), error) {
	w, err := createTape(path, force, tape.Header{
		Format: tape.FormatVersion, Tool: "mcptape", Version: version, Time: time.Now().UnixNano(),
		Transport: kind, Target: target, Argv: capture.RedactArgs(os.Args),
	})
	if err != nil {
		return nil, nil, err
	}
	return w, func() {
		if cerr := w.Close(); cerr != nil {
			fmt.Fprintf(st.err, "mcptape %s: %v\n", name, cerr)
		}
	}, nil
}
