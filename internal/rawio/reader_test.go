//go:build unix

package rawio

import (
	"errors"
	"io"
	"os"
	"syscall"
	"testing"
	"time"
)

// pipe returns a pipe whose ends are pollable (os.Pipe makes them
// non-blocking).
func pipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

func TestReader(t *testing.T) {
	rf, wf := pipe(t)
	rc, err := rf.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	r := NewReader(rc)
	go func() {
		time.Sleep(10 * time.Millisecond) // the first Read waits in the poller
		wf.Write([]byte("hello"))
		wf.Close()
	}()
	buf := make([]byte, 16)
	n, err, waitErr := r.Read(buf)
	if string(buf[:n]) != "hello" || err != nil || waitErr != nil {
		t.Fatalf("Read: %q, %v, %v", buf[:n], err, waitErr)
	}
	if n, err, waitErr := r.Read(buf); n != 0 || err != io.EOF || waitErr != nil {
		t.Fatalf("Read at the end: %d, %v, %v", n, err, waitErr)
	}

	rf.SetReadDeadline(time.Now().Add(-time.Second))
	if _, _, waitErr := r.Read(buf); !errors.Is(waitErr, os.ErrDeadlineExceeded) {
		t.Fatalf("Read past its deadline: %v", waitErr)
	}
}

func TestReadWriteErrno(t *testing.T) {
	rf, wf := pipe(t)
	var rfd, wfd uintptr
	rc, _ := rf.SyscallConn()
	wc, _ := wf.SyscallConn()
	rc.Control(func(fd uintptr) { rfd = fd })
	wc.Control(func(fd uintptr) { wfd = fd })
	if n, err := Read(rfd, make([]byte, 4)); n != 0 || err != syscall.EAGAIN {
		t.Fatalf("Read of an empty pipe: %d, %v; want EAGAIN", n, err)
	}
	total := 0
	for { // fill the pipe
		n, err := Write(wfd, make([]byte, 4096))
		total += n
		if err == syscall.EAGAIN {
			break
		}
		if err != nil || total > 64<<20 {
			t.Fatalf("Write: %d, %v after %d bytes", n, err, total)
		}
	}
	if total == 0 {
		t.Fatal("nothing written before EAGAIN")
	}
	if n, err := Read(wfd, make([]byte, 4)); n != 0 || err == nil { // the write end cannot be read
		t.Fatalf("Read of a write end: %d, %v", n, err)
	}
}

// TestReaderIdle: the idle function runs when a Read would wait, and only
// then, once; the Read tries again after it (here it finds what the idle
// function wrote) before it waits.
func TestReaderIdle(t *testing.T) {
	rf, wf := pipe(t)
	rc, err := rf.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	r := NewReader(rc)
	buf := make([]byte, 16)
	runs := 0
	r.SetIdle(func() { runs++; wf.Write([]byte("from idle")) })

	wf.Write([]byte("ready"))
	if n, err, waitErr := r.Read(buf); string(buf[:n]) != "ready" || err != nil || waitErr != nil || runs != 0 {
		t.Fatalf("Read with bytes there: %q, %v, %v; idle ran %d times, want 0", buf[:n], err, waitErr, runs)
	}
	// Nothing there: idle runs, and the Read returns its bytes without waiting.
	if n, err, waitErr := r.Read(buf); string(buf[:n]) != "from idle" || err != nil || waitErr != nil || runs != 1 {
		t.Fatalf("Read of an empty pipe: %q, %v, %v; idle ran %d times, want 1", buf[:n], err, waitErr, runs)
	}
	// It ran once: the next Read waits for the writer.
	go func() {
		time.Sleep(10 * time.Millisecond)
		wf.Write([]byte("later"))
	}()
	if n, err, waitErr := r.Read(buf); string(buf[:n]) != "later" || err != nil || waitErr != nil || runs != 1 {
		t.Fatalf("Read after idle ran: %q, %v, %v; idle ran %d times, want 1", buf[:n], err, waitErr, runs)
	}
	// SetIdle(nil) cancels it.
	r.SetIdle(func() { runs++ })
	r.SetIdle(nil)
	go func() {
		time.Sleep(10 * time.Millisecond)
		wf.Write([]byte("x"))
	}()
	if _, _, _ = r.Read(buf); runs != 1 {
		t.Fatalf("cancelled idle ran")
	}
}
