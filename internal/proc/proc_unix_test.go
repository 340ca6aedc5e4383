//go:build unix

package proc

import (
	"os/exec"
	"os/signal"
	"syscall"
	"testing"
)

func ignoreTerm() { signal.Ignore(syscall.SIGTERM) }

// TestKill: Kill kills a command's group; a command not started is no error.
func TestKill(t *testing.T) {
	if err := Kill(exec.Command("true")); err != nil {
		t.Errorf("Kill of a command not started: %v", err)
	}
	cmd := helper("stubborn")
	Prepare(cmd)
	if _, err := cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := Kill(cmd); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if got := ExitStatus(cmd.ProcessState); got != (Status{Code: 137, Signal: "SIGKILL"}) {
		t.Errorf("ExitStatus = %+v, want 137 SIGKILL", got)
	}
}
