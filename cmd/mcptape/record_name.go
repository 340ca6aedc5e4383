package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mcptape/mcptape/internal/clientconfig"
)

// nameTape applies --name: with no -o, the tape goes to the state
// directory as NAME-TIME-PID.jsonl.zst (what "mcptape wrap" asks for, so
// that a client's servers each have their tapes by name). It sets
// f.output and returns it ("" when there is no --name).
func (f *recordFlags) nameTape(getenv func(string) string, start time.Time, pid int) (string, error) {
	switch {
	case f.name == "":
		return "", nil
	case f.output != "":
		return "", usageError("--name names the tape in the state directory; -o names it already: give one of them")
	case clientconfig.TapeName(f.name) != f.name:
		return "", usageError("--name %q: use letters, digits, '.', '_' and '-' only (as in %q)", f.name, clientconfig.TapeName(f.name))
	}
	path, err := defaultTapePath(getenv, start, pid)
	if err != nil {
		return "", err
	}
	f.output = filepath.Join(filepath.Dir(path), f.name+"-"+filepath.Base(path))
	return f.output, nil
}

// applyName runs nameTape for the running process and reports the path.
func (f *recordFlags) applyName(st *stdio) error {
	path, err := f.nameTape(os.Getenv, time.Now(), os.Getpid())
	if path != "" {
		fmt.Fprintf(st.err, "mcptape record: recording to %s\n", path)
	}
	return err
}
