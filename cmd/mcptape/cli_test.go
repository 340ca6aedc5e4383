package main

import (
	"bytes"
	"context"
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
