//go:build unix

package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
)

// TestWriteOutputFailedOnPipe: an output that fails part way through is
// removed when it is a file, but a named pipe (as a device such as
// /dev/full, which a failed export used to delete) is left as it was,
// mode included.
func TestWriteOutputFailedOnPipe(t *testing.T) {
	path := peertest.Fifo(t)
	var out, errb bytes.Buffer
	err := writeOutput(&stdio{out: &out, err: &errb}, path, nil, func(w io.Writer) error {
		io.WriteString(w, "part")
		return errors.New("disk full")
	})
	if err == nil {
		t.Fatal("writeOutput: no error")
	}
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatalf("the pipe is gone: %v", err)
	}
	if fi.Mode()&os.ModeNamedPipe == 0 || fi.Mode().Perm() != 0o644 {
		t.Errorf("pipe now %v, want a named pipe of mode 0644", fi.Mode())
	}
}
