package http1

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"
)

// TestIdlePeek: the look at an idle connection tells an open, silent one
// (fit for reuse) from a closed one or one with bytes nobody asked for.
func TestIdlePeek(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	pair := func() (client, server net.Conn) {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(); s.Close() })
		return c, s
	}
	tests := []struct {
		name string
		peer func(net.Conn)
		want bool
	}{
		{"idle", func(net.Conn) {}, true},
		{"bytes waiting", func(s net.Conn) { io.WriteString(s, "x") }, false},
		{"closed by the peer", func(s net.Conn) { s.Close() }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, s := pair()
			tt.peer(s)
			time.Sleep(20 * time.Millisecond)
			br := bufio.NewReader(c)
			if got := NewIdlePeek(c, br).Quiet(); got != tt.want {
				t.Errorf("Quiet = %v, want %v", got, tt.want)
			}
			if tt.name == "bytes waiting" { // the look consumed nothing
				b := make([]byte, 1)
				if n, _ := br.Read(b); n != 1 || b[0] != 'x' {
					t.Errorf("read %q after the look", b[:n])
				}
			}
		})
	}
}
