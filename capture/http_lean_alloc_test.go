package capture

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"testing"
)

// maxLeanAllocs bounds the allocations of one echo-shaped exchange on the
// lean path (request head and body, an event-stream response of one
// message, its recording into a tape that keeps nothing), on the proxy's
// side: 3 when it was set (the text of the request head and of the
// response head, whose strings the request and response are made of, the
// request, response, header maps, exchange and event framer being reused;
// a chunked reader), with room for 2 more; 1 since heads that repeat the
// last one's bytes reuse its text (httphead.Text), with room for 2 more.
const maxLeanAllocs = 3

// TestHTTPLeanAllocs: an exchange through the lean path allocates at most
// maxLeanAllocs times. The client and the upstream here allocate nothing
// per exchange, so what AllocsPerRun counts is the proxy's: a change that
// brings back an allocation per exchange (a framer, a body copy, an
// escaping note per event...) fails here.
func TestHTTPLeanAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	event := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"hi\"}]}}\n\n"
	answer := []byte("HTTP/1.1 200 OK\r\nCache-Control: no-cache\r\nContent-Type: text/event-stream\r\nMcp-Session-Id: S1\r\n" +
		"Date: Sun, 29 Nov 2026 16:31:51 GMT\r\nTransfer-Encoding: chunked\r\n\r\n" + fmt.Sprintf("%x\r\n%s\r\n0\r\n\r\n", len(event), event))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go quietUpstream(ln, answer)
	rig := startProxyTape(t, "http://"+ln.Addr().String(), discardTape{})
	c, err := net.Dial("tcp", rig.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`
	req := []byte(fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\nAccept: application/json, text/event-stream\r\n"+
		"Content-Type: application/json\r\nMcp-Protocol-Version: 2025-06-18\r\nMcp-Session-Id: S1\r\n\r\n%s", rig.addr, len(body), body))
	buf := make([]byte, 4096)
	// The first exchange gives the length of the proxy's answer, which is
	// the same for every one (its header order aside).
	size := 0
	for !bytes.HasSuffix(buf[:size], []byte("\r\n0\r\n\r\n")) {
		if size == 0 {
			if _, err := c.Write(req); err != nil {
				t.Fatal(err)
			}
		}
		n, err := c.Read(buf[size:])
		if err != nil {
			t.Fatalf("first answer: %v after %q", err, buf[:size])
		}
		size += n
	}
	if !bytes.HasPrefix(buf, []byte("HTTP/1.1 200 OK\r\n")) {
		t.Fatalf("first answer %q", buf[:size])
	}
	exchange := func() {
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, buf[:size]); err != nil {
			t.Fatal(err)
		}
	}
	for range 50 { // warm the pools and buffers
		exchange()
	}
	if got := testing.AllocsPerRun(500, exchange); got > maxLeanAllocs {
		t.Errorf("%v allocations per exchange, want at most %d", got, maxLeanAllocs)
	} else {
		t.Logf("%v allocations per exchange", got)
	}
}

// quietUpstream answers every request on the connections ln accepts with
// answer, allocating nothing per request: it reads a head to its blank
// line, then as many body bytes as its Content-Length says.
func quietUpstream(ln net.Listener, answer []byte) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			buf := make([]byte, 64<<10)
			have := 0
			for {
				end := bytes.Index(buf[:have], []byte("\r\n\r\n"))
				if end < 0 {
					n, err := c.Read(buf[have:])
					if err != nil {
						return
					}
					have += n
					continue
				}
				need := end + 4 + contentLength(buf[:end])
				for have < need {
					n, err := c.Read(buf[have:])
					if err != nil {
						return
					}
					have += n
				}
				if _, err := c.Write(answer); err != nil {
					return
				}
				have = copy(buf, buf[need:have])
			}
		}()
	}
}

// contentLength returns the Content-Length of a request head, 0 without
// one (the proxy writes the name so).
func contentLength(head []byte) int {
	const name = "\r\nContent-Length: "
	i := bytes.Index(head, []byte(name))
	if i < 0 {
		return 0
	}
	v := head[i+len(name):]
	if j := bytes.IndexByte(v, '\r'); j >= 0 {
		v = v[:j]
	}
	n := 0
	for _, d := range v {
		if d < '0' || d > '9' {
			break
		}
		n = n*10 + int(d-'0')
	}
	return n
}
