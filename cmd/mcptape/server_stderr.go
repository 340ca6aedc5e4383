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
	"discard, or `FILE` (created or truncated, mode 0600)"

// serverStderrFlag registers --server-stderr on fs into p.
func serverStderrFlag(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "server-stderr", "-", serverStderrHelp)
}

// openServerStderr returns where a stdio server's standard error goes, as
// --server-stderr says (nil: discarded), the stdio for the command's own
// messages (when mcptape's stderr is not a file, such as a test's buffer,
// it is then shared with the servers' one write at a time) and a function
// that closes a file after the run. The servers' stderr is always read (a
// file they write themselves, or a pipe that exec copies from), so a
// chatty server never blocks on it. A stdio server's stderr is read when isStdio; otherwise a value
// other than the default is a usage error.
func openServerStderr(st *stdio, where string, isStdio bool) (*stdio, io.Writer, func(), error) {
	nop := func() {}
	if !isStdio {
		if where != "-" {
			return st, nil, nop, usageError("--server-stderr applies to a stdio server (-- CMD)")
		}
		return st, nil, nop, nil
	}
	switch where {
	case "-":
		if f, ok := st.err.(*os.File); ok {
			// The servers write to the same file, each write whole (as
			// mcptape's own, one system call each), with no pipe between;
			// st.err stays a file, so load still sees a terminal.
			return st, f, nop, nil
		}
		shared := &stdio{in: st.in, out: st.out, err: syncio.NewWriter(st.err)}
		return shared, shared.err, nop, nil
	case "discard":
		return st, nil, nop, nil
	case "":
		return st, nil, nop, usageError("--server-stderr is empty: want -, discard or a FILE")
	}
	fh, err := privfile.Create(where)
	if err != nil {
		return st, nil, nop, withCode(2, fmt.Errorf("--server-stderr: %w", err))
	}
	return st, fh, func() { fh.Close() }, nil
}
