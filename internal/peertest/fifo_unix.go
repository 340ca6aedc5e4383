//go:build unix

package peertest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Fifo makes a named pipe of mode 0644 (past the umask) in a temporary
// directory and returns its path, with a reader open on it until the test
// ends, so that opening it for writing does not block: the output that is
// not a regular file (a device such as /dev/full alike) for tests of what
// is created, written and removed. The test is skipped where mkfifo fails.
func Fifo(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return path
}
