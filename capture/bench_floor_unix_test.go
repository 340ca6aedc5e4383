//go:build unix

package capture

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// runForwardFloor starts argv with its stdin and stdout on pipes and
// copies this process's stdin to the child and the child's stdout to this
// process's stdout, each way in a thread of its own, with blocking read
// and write system calls: what a minimal forwarder written in C does (no
// poller, no scheduler between a read and its write). It returns when the
// child's output ends.
func runForwardFloor(argv []string) int {
	if len(argv) == 0 {
		return 2
	}
	var toChild, fromChild [2]int
	if syscall.Pipe(toChild[:]) != nil || syscall.Pipe(fromChild[:]) != nil {
		return 3
	}
	for _, fd := range []int{toChild[0], toChild[1], fromChild[0], fromChild[1]} {
		syscall.CloseOnExec(fd) // the child holds only its own ends, as fd 0 and 1
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = os.NewFile(uintptr(toChild[0]), "child-stdin")
	cmd.Stdout = os.NewFile(uintptr(fromChild[1]), "child-stdout")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return 127
	}
	syscall.Close(toChild[0])
	syscall.Close(fromChild[1])
	go func() {
		copyFD(toChild[1], 0)
		syscall.Close(toChild[1])
	}()
	copyFD(1, fromChild[0])
	cmd.Wait()
	return 0
}

// copyFD copies from the blocking descriptor src to dst until src ends or
// a write fails, on a thread of its own.
func copyFD(dst, src int) {
	runtime.LockOSThread()
	buf := make([]byte, 64<<10)
	for {
		n, err := syscall.Read(src, buf)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if n <= 0 {
			return
		}
		for p := buf[:n]; len(p) > 0; {
			w, err := syscall.Write(dst, p)
			if errors.Is(err, syscall.EINTR) {
				continue
			}
			if w <= 0 {
				return
			}
			p = p[w:]
		}
	}
}
