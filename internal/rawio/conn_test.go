//go:build linux && !mcptape_portable

package rawio

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pair returns a wrapped client connection and the server's end of it.
func pair(t *testing.T) (*Conn, *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	srv := <-accepted
	if srv == nil {
		t.Fatal("accept failed")
	}
	c, ok := Wrap(nc).(*Conn)
	if !ok {
		t.Fatalf("Wrap of a TCP connection gave %T", Wrap(nc))
	}
	t.Cleanup(func() { c.Close(); srv.Close() })
	return c, srv.(*net.TCPConn)
}

func TestWrapOther(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if got := Wrap(a); got != a {
		t.Fatalf("Wrap of a pipe gave %T, want it unchanged", got)
	}
}

// TestConnBothWays moves more bytes each way than the socket buffers hold,
// so that writes wait in the poller and reads see partial chunks.
func TestConnBothWays(t *testing.T) {
	c, srv := pair(t)
	want := bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MiB
	echoed := make(chan []byte, 1)
	go func() { // the server echoes everything, then closes its side
		var got bytes.Buffer
		io.Copy(io.MultiWriter(&got, srv), srv)
		srv.CloseWrite()
		echoed <- got.Bytes()
	}()
	readBack := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(struct{ io.Reader }{c}) // plain Reads, not WriteTo
		readBack <- b
	}()
	if n, err := c.Write(want); n != len(want) || err != nil {
		t.Fatalf("Write: %d, %v", n, err)
	}
	c.CloseWrite()
	if got := <-echoed; !bytes.Equal(got, want) {
		t.Fatalf("server got %d bytes, want %d", len(got), len(want))
	}
	if got := <-readBack; !bytes.Equal(got, want) {
		t.Fatalf("read back %d bytes, want %d", len(got), len(want))
	}
	if n, err := c.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Fatalf("Read after the end: %d, %v; want 0, io.EOF", n, err)
	}
	if n, err := c.Read(nil); n != 0 || err != nil {
		t.Fatalf("empty Read: %d, %v", n, err)
	}
}

// TestConnErrors checks that errors read as net's do: deadlines, a closed
// connection, a reset by the peer.
func TestConnErrors(t *testing.T) {
	c, srv := pair(t)
	c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err := c.Read(make([]byte, 8))
	var ne net.Error
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("Read past its deadline: %v", err)
	}
	if want := "read tcp " + c.LocalAddr().String() + "->" + c.RemoteAddr().String() + ": i/o timeout"; err.Error() != want {
		t.Fatalf("deadline error %q, want %q", err, want)
	}
	c.SetReadDeadline(time.Time{})

	srv.SetLinger(0) // close with a reset
	srv.Close()
	time.Sleep(20 * time.Millisecond)
	_, err = c.Read(make([]byte, 8))
	if !errors.Is(err, syscall.ECONNRESET) || !strings.HasPrefix(err.Error(), "read tcp ") {
		t.Fatalf("Read after a reset: %v", err)
	}
	_, err = c.Write([]byte("x"))
	if !errors.Is(err, syscall.EPIPE) && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("Write after a reset: %v", err)
	}

	c.Close()
	if _, err := c.Read(make([]byte, 8)); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Read after Close: %v", err)
	}
	if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Write after Close: %v", err)
	}
}

// TestConnCloseUnblocks checks that Close ends a Read waiting in the
// poller.
func TestConnCloseUnblocks(t *testing.T) {
	c, _ := pair(t)
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 8))
		done <- err
	}()
	time.Sleep(20 * time.Millisecond)
	c.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("waiting Read ended with %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not end a waiting Read")
	}
}
