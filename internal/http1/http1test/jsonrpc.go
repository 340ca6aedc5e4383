package http1test

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"strconv"
	"sync"
	"testing"
)

// ServeJSONRPC serves, on loopback until the test ends, a Streamable HTTP
// server in its leanest form: every POST on a keep-alive connection is
// answered 200 with the JSON-RPC result {} under the request's id (the
// first "id" member of the body), allocating nothing per request, so that
// allocation tests of clients count the client's allocations only. It
// returns the endpoint's URL.
func ServeJSONRPC(tb testing.TB) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, nc)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer nc.Close()
				answerJSONRPC(nc, bufio.NewReader(nc))
			}()
		}
	}()
	tb.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, nc := range conns {
			nc.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return "http://" + ln.Addr().String() + "/mcp"
}

var (
	contentLength = []byte("content-length:")
	idMember      = []byte(`"id":`)
	answerHead    = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
)

// answerJSONRPC answers the requests read from br on nc until either
// ends or a request is not of the form ServeJSONRPC takes.
func answerJSONRPC(nc net.Conn, br *bufio.Reader) {
	var body, out []byte
	for {
		n := -1
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				return
			}
			if len(line) <= 2 { // the blank line ending the head
				break
			}
			if len(line) > len(contentLength) && bytes.EqualFold(line[:len(contentLength)], contentLength) {
				n = 0
				for _, b := range bytes.TrimSpace(line[len(contentLength):]) {
					n = n*10 + int(b-'0')
				}
			}
		}
		if n < 0 || n > 1<<20 {
			return
		}
		if cap(body) < n {
			body = make([]byte, n)
		}
		body = body[:n]
		if _, err := io.ReadFull(br, body); err != nil {
			return
		}
		id := []byte("null")
		if i := bytes.Index(body, idMember); i >= 0 {
			rest := bytes.TrimLeft(body[i+len(idMember):], " ")
			end := bytes.IndexAny(rest, ",}")
			if end > 0 {
				id = bytes.TrimSpace(rest[:end])
			}
		}
		size := len(`{"jsonrpc":"2.0","id":`) + len(id) + len(`,"result":{}}`)
		out = append(out[:0], answerHead...)
		out = strconv.AppendInt(out, int64(size), 10)
		out = append(out, "\r\n\r\n"+`{"jsonrpc":"2.0","id":`...)
		out = append(out, id...)
		out = append(out, `,"result":{}}`...)
		if _, err := nc.Write(out); err != nil {
			return
		}
	}
}
