//go:build unix

package capture

import (
	"context"
	"errors"
	"io"
	"syscall"
	"testing"
	"time"
)

// TestRunStdioKillsWhatTheServerLeft: a grandchild that the server left
// running when it exited by itself (here holding its stdout) does not
// outlive the recording: the rest of the server's process group is killed,
// as internal/proc's Stop does.
func TestRunStdioKillsWhatTheServerLeft(t *testing.T) {
	argv, env := peerCmd(t, "grandchild")
	inR, inW := io.Pipe() // stdin stays open: the child exits by itself
	defer inW.Close()
	res, err := RunStdio(context.Background(), StdioOptions{Command: argv, Env: env, Stdin: inR, Stdout: io.Discard,
		Tape: &memTape{}, Grace: 200 * time.Millisecond, Warnf: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-res.Pid, syscall.SIGKILL) })
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := syscall.Kill(-res.Pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still has a member 5s after RunStdio returned (kill -0: %v)", res.Pid, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
