package main

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"strings"
	"testing"
)

// runCLI runs the mcptape command line args in-process with stdin as its
// standard input, and returns the exit code, stdout and stderr.
func runCLI(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), &stdio{in: strings.NewReader(stdin), out: &out, err: &errb}, args)
	return code, out.String(), errb.String()
}

// privateMode reports whether fi, a file mcptape wrote, is its owner's
// only: mode 0600. Windows keeps no permission bits (a read-only flag
// only): there the access list privfile sets is checked by privfile's own
// Windows test, and any mode passes.
func privateMode(fi os.FileInfo) bool {
	return runtime.GOOS == "windows" || fi.Mode().Perm() == 0o600
}
