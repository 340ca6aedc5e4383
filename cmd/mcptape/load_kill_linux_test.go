//go:build linux && !mcptape_portable

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
)

// TestLoadKilledLeavesNoServer kills "mcptape load -- CMD" with SIGKILL
// while 20 sessions run, each its own child, and finds none of them left.
// Each child is a shell that runs the server and then, once the server has
// seen its stdin end, would go on running (exec sleep): only the signal
// the kernel sends it when mcptape dies (internal/proc) stops it.
func TestLoadKilledLeavesNoServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := serveBinary(t)
	mark := fmt.Sprintf("MCPTAPE_KILL_TEST=%d-%d", os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() { // a failed run leaves nothing behind either
		for _, pid := range marked(mark) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	server := fmt.Sprintf("%s serve; exec sleep 300", strconv.Quote(bin))
	cmd := exec.Command(bin, "load", "--sessions", "20", "--duration", "5m", "-q",
		"--call", `tools/call echo {"message":"hi"}`, "--", "sh", "-c", server)
	cmd.Env = append(os.Environ(), mark)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	servers := func() int {
		n := 0
		for _, pid := range marked(mark) {
			if args, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline")); bytes.HasSuffix(args, []byte("\x00serve\x00")) {
				n++
			}
		}
		return n
	}
	deadline := time.Now().Add(time.Minute)
	for servers() < 20 {
		select {
		case err := <-exited:
			t.Fatalf("load ended before its 20 sessions ran: %v\n%s", err, out.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("only %d of 20 servers running after a minute\n%s", servers(), out.String())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited

	deadline = time.Now().Add(20 * time.Second)
	for {
		left := marked(mark)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			var desc []string
			for _, pid := range left {
				args, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
				desc = append(desc, fmt.Sprintf("%d %q", pid, bytes.ReplaceAll(args, []byte{0}, []byte{' '})))
			}
			t.Fatalf("%d processes of the killed load still running:\n%s", len(left), strings.Join(desc, "\n"))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// marked returns the live processes (not zombies) whose environment holds
// mark ("K=V").
func marked(mark string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err == nil && bytes.Contains(append([]byte{0}, env...), []byte("\x00"+mark+"\x00")) && peertest.Alive(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}
