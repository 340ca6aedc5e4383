package main

import (
	"flag"
	"os"
	"strconv"
	"testing"
)

// exitHelperArg marks the command line of TestExitHelperProcess.
const exitHelperArg = "mcptape-test-exit"

// TestExitHelperProcess is, started by exitArgv, a server that exits at
// once with the code given: the tests' true and false on every system.
func TestExitHelperProcess(t *testing.T) {
	args := flag.Args()
	if len(args) != 2 || args[0] != exitHelperArg {
		t.Skip("helper process: a server that exits at once")
	}
	code, _ := strconv.Atoi(args[1])
	os.Exit(code)
}

// exitArgv is the command line that starts this test binary as a server
// that exits at once with code, reading nothing.
func exitArgv(code int) []string {
	return []string{os.Args[0], "-test.run=^TestExitHelperProcess$", exitHelperArg, strconv.Itoa(code)}
}
