package proc

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStopKillsTheRestOfTheGroup: a grandchild left running by a child that
// exited is killed with the group.
func TestStopKillsTheRestOfTheGroup(t *testing.T) {
	c, stdin, stdout := start(t, "group")
	line, err := stdout.ReadString('\n')
	pid, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil {
		t.Fatalf("helper said %q, %v", line, err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	if err := c.Stop(stdin, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if got := c.Status(); got.Code != 0 {
		t.Errorf("child Status = %+v, want code 0", got)
	}
	deadline := time.Now().Add(10 * time.Second)
	for syscall.Kill(pid, 0) == nil && !zombie(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d still running after Stop", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// zombie reports whether pid has exited and waits to be reaped.
func zombie(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	i := bytes.LastIndexByte(stat, ')')
	return err != nil || (i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z')
}
