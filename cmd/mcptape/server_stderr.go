package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/mcptape/mcptape/internal/privfile"
	"github.com/mcptape/mcptape/internal/syncio"
)

// serverStderrHelp is the help text of --server-stderr (replay and load).
const serverStderrHelp = "with -- CMD: where the server's stderr goes: - (mcptape's stderr, as record does; each write of the server kept whole), " +
	"discard, or `FILE` (created or truncated, mode 0600, once every other check passed)"

// serverStderrFlag registers --server-stderr on fs into p.
func serverStderrFlag(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "server-stderr", "-", serverStderrHelp)
	outputFlag(fs, "server-stderr", false, "discard")
}

// serverStderr is where a stdio server's standard error goes, as
// --server-stderr says, checked but not opened yet: a FILE is created
// (truncated) only by open, which the command calls once every usage
// check passed, so that bad input leaves an existing file as it was.
type serverStderr struct {
	w    io.Writer // mcptape's stderr for "-"; nil when discarded or a FILE
	path string    // FILE, created by open
}

// checkServerStderr checks --server-stderr (where) and returns it, with
// the stdio for the command's own messages: when mcptape's stderr is not
// a file (such as a test's buffer) and the servers write to it too, it is
// shared with them one write at a time. A stdio server's stderr is read
// when isStdio; otherwise a value other than the default is a usage error.
// No file is touched.
func checkServerStderr(st *stdio, where string, isStdio bool) (*stdio, *serverStderr, error) {
	if !isStdio {
		if where != "-" {
			return st, nil, usageError("--server-stderr applies to a stdio server (-- CMD)")
		}
		return st, &serverStderr{}, nil
	}
	switch where {
	case "-":
		if f, ok := st.err.(*os.File); ok {
			// The servers write to the same file, each write whole (as
			// mcptape's own, one system call each), with no pipe between;
			// st.err stays a file, so load still sees a terminal.
			return st, &serverStderr{w: f}, nil
		}
		shared := &stdio{in: st.in, out: st.out, err: syncio.NewWriter(st.err)}
		return shared, &serverStderr{w: shared.err}, nil
	case "discard":
		return st, &serverStderr{}, nil
	case "":
		return st, nil, usageError("--server-stderr is empty: want -, discard or a FILE")
	}
	return st, &serverStderr{path: where}, nil
}

// open returns where the servers' stderr goes (nil: discarded), creating
// a FILE (mode 0600), and a function that closes it after the run. The
// servers' stderr is always read (a file they write themselves, or a
// pipe that exec copies from), so a chatty server never blocks on it.
func (s *serverStderr) open() (io.Writer, func(), error) {
	if s.path == "" {
		return s.w, func() {}, nil
	}
	fh, err := privfile.Create(s.path)
	if err != nil {
		return nil, nil, withCode(2, fmt.Errorf("--server-stderr: %w", err))
	}
	return fh, func() { fh.Close() }, nil
}
