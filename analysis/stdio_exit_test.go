package analysis

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/mcptape/mcptape/capture"
	"github.com/mcptape/mcptape/tape"
)

// peerEnv, when set, makes this test binary a stdio peer (TestMain):
// "exit-on-request" reads one line, then exits with code 3, unanswered;
// "exit-on-eof" reads to the end of its input and exits, answering
// nothing; "hold-after-eof" reads to the end of its input and waits
// (until the recorder ends it).
const peerEnv = "MCPTAPE_ANALYSIS_PEER"

func TestMain(m *testing.M) {
	switch os.Getenv(peerEnv) {
	case "exit-on-request":
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		os.Exit(3)
	case "exit-on-eof":
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	case "hold-after-eof":
		_, _ = io.Copy(io.Discard, os.Stdin)
		time.Sleep(time.Minute)
		os.Exit(0)
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

// TestRecordedStdioClientGone records, through the stdio recorder, a
// client that sends a request and closes its input at once, in front of a
// server that exits on that end without answering, and of one that does
// not exit until the recorder ends it after its grace period: either way
// the client left before the answer. The request is client_gone, not
// never answered, in inspect's counts and problems, the operations (the
// requests table, the HTML report) and the OTLP export (no error status).
func TestRecordedStdioClientGone(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, peer := range []string{"exit-on-eof", "hold-after-eof"} {
		t.Run(peer, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.jsonl.zst")
			w, err := tape.Create(path, tape.Header{Version: "test", Transport: "stdio", Target: exe})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			in := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}` + "\n")
			res, err := capture.RunStdio(ctx, capture.StdioOptions{Command: []string{exe}, Env: append(os.Environ(), peerEnv+"="+peer),
				Stdin: in, Stdout: io.Discard, Tape: w, Grace: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if res.Reason != capture.ReasonClientEOF {
				t.Fatalf("recorded reason %q, want %q", res.Reason, capture.ReasonClientEOF)
			}
			var outcomes []string
			rep, err := Inspect(ctx, path, WithOperations(func(op *Operation) { outcomes = append(outcomes, op.Outcome) }))
			if err != nil {
				t.Fatal(err)
			}
			if u := rep.Unanswered; u.ClientGone != 1 || len(u.ClientGoneRequests) != 1 || u.Count != 0 || u.BrokenOff != 0 || u.CutByShutdown != 0 {
				t.Errorf("client gone %d, never answered %d, broken off %d, cut %d; want 1, 0, 0, 0", u.ClientGone, u.Count, u.BrokenOff, u.CutByShutdown)
			}
			if len(outcomes) != 1 || outcomes[0] != OutcomeClientGone {
				t.Errorf("operation outcomes %q, want [%s]", outcomes, OutcomeClientGone)
			}
			found := map[string]bool{}
			for _, p := range rep.Problems {
				found[p.What] = true
			}
			if !found["client-gone"] || found["unanswered"] || found["broken-off"] {
				t.Errorf("problems %+v, want client-gone, no unanswered or broken-off", rep.Problems)
			}
			var text bytes.Buffer
			if err := WriteText(&text, rep); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text.String(), "CLIENT GONE  1") {
				t.Errorf("text report lacks the client gone request:\n%s", text.String())
			}
			var rows bytes.Buffer
			if _, err := ExportRequests(ctx, []string{path}, &rows, RequestsNDJSON); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(rows.String(), `"outcome":"client_gone"`) {
				t.Errorf("requests table: %s", rows.String())
			}
			for _, sp := range spansOf(t, path) {
				if sp.Status != nil && sp.Status.Code == tracepb.Status_STATUS_CODE_ERROR {
					t.Errorf("span %s has an error status: %v", sp.Name, sp.Status)
				}
			}
		})
	}
}
