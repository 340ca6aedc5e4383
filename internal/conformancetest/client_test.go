package conformancetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
)

// clientScenarios are the conformance client scenarios the go-sdk
// everything-client runs against a mock of its recorded run: every client
// scenario of `conformance list --client` (0.1.16) that is not auth/*.
// The auth scenarios are left out: their test server names its own
// address in the OAuth metadata and runs the authorization server there,
// so through a recording proxy on another address the client's OAuth
// traffic bypasses the tape, and a mock (which serves only the recorded
// MCP endpoint, not OAuth) cannot answer it.
var clientScenarios = []string{"initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"}

// clientTimeout ends a client run that hangs; a scenario takes about one
// second.
const clientTimeout = 60 * time.Second

// Environment of the test binary run as the wrapper `conformance client
// --command` starts (see runWrapper).
const (
	wrapEnv       = "MCPTAPE_TEST_WRAP_CLIENT" // the client command to run
	wrapBinEnv    = "MCPTAPE_TEST_WRAP_BIN"    // the mcptape command
	wrapTapeEnv   = "MCPTAPE_TEST_WRAP_TAPE"   // the tape to record
	exitFileAdded = ".client-exit"             // beside the tape: the client's exit code
)

// runWrapper is the test binary as the client command of `conformance
// client`: it starts `mcptape record --listen 127.0.0.1:0 --upstream URL`
// in front of the test server (URL is its last argument), runs the client
// with the proxy's URL instead, writes the client's exit code beside the
// tape, stops the proxy, and exits as the client did.
func runWrapper() int {
	url := os.Args[len(os.Args)-1]
	bin, tapePath, client := os.Getenv(wrapBinEnv), os.Getenv(wrapTapeEnv), os.Getenv(wrapEnv)
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	p, err := startProxy(ctx, bin, url, tapePath)
	if err != nil {
		fmt.Fprintln(os.Stderr, "wrapper:", err)
		return 125
	}
	cmd := peertest.Command(ctx, []string{client, p.URL}, nil)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	code := exitStatus(cmd.Run())
	if err := os.WriteFile(tapePath+exitFileAdded, []byte(strconv.Itoa(code)), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, "wrapper:", err)
		return 125
	}
	if err := p.stop(); err != nil {
		fmt.Fprintln(os.Stderr, "wrapper:", err)
		return 125
	}
	return code
}

// exitStatus is the exit status err (from exec.Cmd.Run) stands for: -1 when
// the command did not run or was killed.
func exitStatus(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	default:
		return -1
	}
}

// TestGoClientAgainstMock runs each of clientScenarios with the go-sdk
// everything-client under `conformance client`, recorded through mcptape
// record (the client talks to the suite's test server through the proxy),
// then runs the client again, alone, against `mcptape mock` of that tape
// with the same scenario: it must exit as it did against the real test
// server, which must have passed the scenario, and the mock's report must
// show no unmatched request and at least one matched.
func TestGoClientAgainstMock(t *testing.T) {
	if testing.Short() {
		t.Skip("real peers: not in -short mode")
	}
	conf := peertest.Conformance(t)
	bin := mcptapeBinary(t)
	client := peertest.GoEverythingClient(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range clientScenarios {
		t.Run(sc, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			dir := t.TempDir()
			tapePath := filepath.Join(dir, "tape.jsonl.zst")

			rctx, cancel := context.WithTimeout(ctx, clientTimeout)
			defer cancel()
			cmd := conf.Command(rctx, "", "client", "--command", self, "--scenario", sc, "-o", filepath.Join(dir, "results"))
			cmd.Env = append(cmd.Env, wrapEnv+"="+client, wrapBinEnv+"="+bin, wrapTapeEnv+"="+tapePath)
			cmd.Dir = dir
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Run(); err != nil {
				t.Fatalf("the scenario failed through the recording proxy: %v\n%s", err, tail(out.String()))
			}
			data, err := os.ReadFile(tapePath + exitFileAdded)
			if err != nil {
				t.Fatalf("the wrapper left no exit code: %v\n%s", err, tail(out.String()))
			}
			want, err := strconv.Atoi(string(data))
			if err != nil {
				t.Fatal(err)
			}

			url, stopMock := startMock(t, ctx, bin, tapePath)
			mctx, cancel := context.WithTimeout(ctx, clientTimeout)
			defer cancel()
			mc := peertest.GoClientCommand(t, mctx, sc, url)
			var mout bytes.Buffer
			mc.Stdout, mc.Stderr = &mout, &mout
			got := exitStatus(mc.Run())
			report := stopMock()
			if got != want {
				t.Errorf("the client exited %d against the mock, %d against the test server:\n%s", got, want, tail(mout.String()))
			}
			if !strings.Contains(report, " 0 unmatched;") || strings.Contains(report, ": 0 requests matched") {
				t.Errorf("the mock's report:\n%s", tail(report))
			}
		})
	}
}
