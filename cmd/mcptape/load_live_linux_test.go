//go:build linux

package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// TestIsTerminal: a pseudo-terminal is a terminal; a pipe, a file,
// /dev/null (a character device) and a buffer are not.
func TestIsTerminal(t *testing.T) {
	master, slave := openPTY(t)
	defer master.Close()
	defer slave.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	file, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	cases := []struct {
		name string
		w    io.Writer
		want bool
	}{{"pty", slave, true}, {"pipe", w, false}, {"/dev/null", null, false}, {"file", file, false}, {"builder", &strings.Builder{}, false}}
	for _, c := range cases {
		if got := isTerminal(c.w); got != c.want {
			t.Errorf("%s: isTerminal %v, want %v", c.name, got, c.want)
		}
	}
}

// openPTY opens a pseudo-terminal pair (Linux /dev/ptmx).
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		m.Close()
		t.Fatalf("unlockpt: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		m.Close()
		t.Fatalf("ptsname: %v", e)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Fatal(err)
	}
	return m, s
}
