package capture

import (
	"io"
	"net"
	"strings"
	"testing"
)

// TestWrappedConnsHalfClose: the connections the proxy gives net/http's
// server, wrapped, half-close when it asks (after a refusal, say): the
// client sees the end at once, not half a second later when the server
// closes (the lean path's handed-over connections did not).
func TestWrappedConnsHalfClose(t *testing.T) {
	for _, tc := range []struct {
		name string
		wrap func(net.Conn) net.Conn
	}{
		{"net/http path", func(c net.Conn) net.Conn { return &refusalConn{Conn: c} }},
		{"handed over", func(c net.Conn) net.Conn { return &replayConn{Conn: c, pending: []byte("GET")} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			client, err := net.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			sc, err := ln.Accept()
			if err != nil {
				t.Fatal(err)
			}
			defer sc.Close()
			cw, ok := tc.wrap(sc).(interface{ CloseWrite() error })
			if !ok {
				t.Fatal("no CloseWrite: net/http's server cannot half-close the connection")
			}
			if err := cw.CloseWrite(); err != nil {
				t.Fatal(err)
			}
			if b, err := io.ReadAll(client); err != nil || len(b) != 0 {
				t.Fatalf("the client read %q, %v; want the end", b, err)
			}
			// Half-closed, not closed: the server still reads.
			io.WriteString(client, "x")
			b := make([]byte, 1)
			if _, err := io.ReadFull(sc, b); err != nil || string(b) != "x" {
				t.Fatalf("the server read %q, %v after the half-close", b, err)
			}
		})
	}
}

func TestNetHTTPRefusal(t *testing.T) {
	for _, tc := range []struct {
		name, b, why string
		ok           bool
	}{
		{"400 with a reason", "HTTP/1.1 400 Bad Request" + refusalHeaders + "400 Bad Request: malformed Host header", "400 Bad Request: malformed Host header", true},
		{"431", "HTTP/1.1 431 Request Header Fields Too Large" + refusalHeaders + "431 Request Header Fields Too Large", "431 Request Header Fields Too Large", true},
		{"501", "HTTP/1.1 501 Not Implemented" + refusalHeaders + "Unsupported transfer encoding", "Unsupported transfer encoding", true},
		{"long reason cut", "HTTP/1.1 400 Bad Request" + refusalHeaders + strings.Repeat("x", 300), strings.Repeat("x", maxRefusal), true},
		{"a handler's 400", "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nDate: Sun, 29 Nov 2026 22:00:00 GMT\r\n\r\n400 Bad Request", "", false},
		{"headers after another", "HTTP/1.1 400 Bad Request\r\nX: y" + refusalHeaders + "400", "", false},
		{"a 200", "HTTP/1.1 200 OK" + refusalHeaders + "ok", "", false},
		{"a body write", `{"jsonrpc":"2.0"}`, "", false},
		{"short", "HTTP/1.1 4", "", false},
	} {
		why, ok := netHTTPRefusal([]byte(tc.b))
		if why != tc.why || ok != tc.ok {
			t.Errorf("%s: %q, %v; want %q, %v", tc.name, why, ok, tc.why, tc.ok)
		}
	}
}

func FuzzNetHTTPRefusal(f *testing.F) {
	f.Add([]byte("HTTP/1.1 400 Bad Request" + refusalHeaders + "400 Bad Request"))
	f.Add([]byte("HTTP/1.1 200 OK\r\n\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		why, ok := netHTTPRefusal(b)
		if !ok {
			if why != "" {
				t.Fatalf("a reason %q without a refusal", why)
			}
			return
		}
		_, after, found := strings.Cut(string(b), refusalHeaders)
		if !strings.HasPrefix(string(b), "HTTP/1.1 ") || !found || len(why) > maxRefusal || !strings.HasPrefix(after, why) {
			t.Fatalf("%q taken for a refusal (reason %q)", b, why)
		}
	})
}
