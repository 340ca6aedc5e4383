package analysis

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcptape/mcptape/capture"
	"github.com/mcptape/mcptape/tape"
)

// peerEnv, when set, makes this test binary a stdio peer (TestMain):
// "exit-on-request" reads one line, then exits with code 3, unanswered.
const peerEnv = "MCPTAPE_ANALYSIS_PEER"

func TestMain(m *testing.M) {
	if os.Getenv(peerEnv) == "exit-on-request" {
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		os.Exit(3)
	}
	os.Exit(m.Run())
}

// TestRecordedStdioServerExitBreaksOff records, through the stdio
// recorder, a server that exits on a request without answering it (the
// client's stdin still open): the request is broken off, as over HTTP
// when a server breaks its response off, in inspect's counts and
// problems and in the requests table; the abnormal exit is still
// reported.
func TestRecordedStdioServerExitBreaksOff(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "t.jsonl.zst")
	w, err := tape.Create(path, tape.Header{Version: "test", Transport: "stdio", Target: exe})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	defer inW.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	go func() {
		_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"crash"}}`+"\n")
	}()
	res, err := capture.RunStdio(ctx, capture.StdioOptions{Command: []string{exe}, Env: append(os.Environ(), peerEnv+"=exit-on-request"),
		Stdin: inR, Stdout: io.Discard, Tape: w, Grace: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if res.Reason != capture.ReasonServerExit || res.ExitCode != 3 {
		t.Fatalf("recorded reason %q code %d, want %q 3", res.Reason, res.ExitCode, capture.ReasonServerExit)
	}
	var outcomes []string
	rep, err := Inspect(ctx, path, WithOperations(func(op *Operation) { outcomes = append(outcomes, op.Outcome) }))
	if err != nil {
		t.Fatal(err)
	}
	if u := rep.Unanswered; u.BrokenOff != 1 || u.Count != 0 {
		t.Errorf("broken off %d, never answered %d; want 1, 0", u.BrokenOff, u.Count)
	}
	if len(outcomes) != 1 || outcomes[0] != OutcomeBrokenOff {
		t.Errorf("operation outcomes %q, want [%s]", outcomes, OutcomeBrokenOff)
	}
	found := map[string]bool{}
	for _, p := range rep.Problems {
		found[p.What] = true
	}
	if !found["broken-off"] || !found["server-exit"] || found["unanswered"] {
		t.Errorf("problems %+v, want broken-off and server-exit, no unanswered", rep.Problems)
	}
}
