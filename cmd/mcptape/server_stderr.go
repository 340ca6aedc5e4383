package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/spf13/pflag"

	"github.com/mcptape/mcptape/internal/privfile"
	"github.com/mcptape/mcptape/internal/syncio"
)

// serverStderrHelp is the help text of --server-stderr (replay and load).
const serverStderrHelp = "with -- CMD: where the server's stderr goes: - (mcptape's stderr, as record does; each write of the server kept whole, or under load's live bar each line, printed above it), " +
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
	w        io.Writer // mcptape's stderr for "-"; nil when discarded or a FILE
	path     string    // FILE, created by open
	toStderr bool      // "-": load shows the servers' lines above its live bar (aboveBar)
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
		if _, ok := st.err.(*os.File); ok || isTerminal(st.err) {
			// The servers write to the same file, each write whole (as
			// mcptape's own, one system call each), with no pipe between;
			// st.err stays a file, so load still sees a terminal (where
			// its live bar takes the servers' lines: aboveBar).
			return st, &serverStderr{w: st.err, toStderr: true}, nil
		}
		shared := &stdio{in: st.in, out: st.out, err: syncio.NewWriter(st.err), cmd: st.cmd}
		return shared, &serverStderr{w: shared.err, toStderr: true}, nil
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

// maxHeldLine bounds the unfinished line a lineWriter holds: a longer
// line is passed on in parts of this size, each ended with a newline.
const maxHeldLine = 64 << 10

// lineWriter passes on whole lines only, to out: what a Write leaves after
// its last newline is held until a later Write ends the line (or it
// reaches maxHeldLine), and Flush passes on what is held, ended with a
// newline. The servers of a run share one: their writes are serialised,
// and a server's unfinished line may be ended by another's next write.
// out must not keep the slice; Write never fails, so that a server never
// blocks on its stderr.
type lineWriter struct {
	mu   sync.Mutex
	out  func([]byte)
	held []byte
}

// Write passes on the lines p completes and holds the rest.
func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	if i := bytes.LastIndexByte(p, '\n'); i >= 0 {
		if len(w.held) == 0 {
			w.out(p[:i+1])
		} else {
			w.held = append(w.held, p[:i+1]...)
			w.out(w.held)
			w.held = w.held[:0]
		}
		p = p[i+1:]
	}
	for len(w.held)+len(p) >= maxHeldLine {
		k := maxHeldLine - len(w.held)
		w.held = append(append(w.held, p[:k]...), '\n')
		w.out(w.held)
		w.held, p = w.held[:0], p[k:]
	}
	w.held = append(w.held, p...)
	return n, nil
}

// Flush passes on the line held, if any, ended with a newline.
func (w *lineWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.held) > 0 {
		w.out(append(w.held, '\n'))
		w.held = w.held[:0]
	}
}
