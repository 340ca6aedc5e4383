// Package http1test holds the corpus of HTTP/1.1 responses that the
// differential tests of internal/http1 (the reader against net/http's),
// of transport (the lean client against net/http's Transport, over TCP)
// and of capture (the proxy's lean path against its net/http path) all
// run, and the outcome they compare.
package http1test

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"strings"
)

// Answer is a response, as raw bytes, to a request with Method.
type Answer struct {
	Name, Method, Raw string
}

// Answers are responses whose reading differed from net/http's in one of
// mcptape's two earlier readers, or tests a rule of the fast reader, or
// always matched (common answers of MCP servers).
var Answers = []Answer{
	// common answers
	{"plain", "POST", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"},
	{"event stream", "POST", "HTTP/1.1 200 OK\r\nCache-Control: no-cache, no-transform\r\nConnection: keep-alive\r\nContent-Type: text/event-stream\r\n" +
		"Mcp-Session-Id: S1\r\nDate: Sun, 29 Nov 2026 16:31:51 GMT\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"10\r\nevent: message\n\n\r\n0\r\n\r\nHTTP/1.1 200 OK\r\n"},
	{"json", "POST", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"},
	{"accepted", "POST", "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"},
	{"empty event stream", "POST", "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 0\r\n\r\n"},
	{"lower-case names", "POST", "HTTP/1.1 404\r\ncontent-length: 5\r\nconnection: close\r\npragma: no-cache\r\n\r\nnope!"},
	{"repeated names", "POST", "HTTP/1.1 200 OK\r\nset-cookie: a\r\nSet-Cookie: b\r\nmcp-session-id:  s1 \r\nContent-Length: 0\r\n\r\n"},
	{"chunked upper case, trailer", "GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: CHUNKED\r\nConnection: close, x\r\n\r\n3\r\nabc\r\n0\r\nX-T: 1\r\nx-t: 2\r\n\r\n"},
	{"chunked with trailer", "POST", "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\nX-T: 1\r\n\r\n"},
	{"cut chunked, reason with spaces", "POST", "HTTP/1.1 500 Internal  Error \r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n0\r\n"},
	{"short body", "POST", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort"},
	{"bad chunk", "POST", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"},
	{"error body", "POST", "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{\"error\":\"x\"}"},
	{"interim 100", "POST", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\nx"},
	{"interim then 204", "POST", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"},
	{"http/1.0 keep-alive", "POST", "HTTP/1.0 404\r\nconnection: keep-alive\r\n\r\n"},
	{"http/1.0", "GET", "HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nabc"},
	// framing
	{"incomplete head", "POST", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n"},
	{"head with content length", "HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 42\r\n\r\n"},
	{"head chunked", "HEAD", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"},
	{"head without length", "HEAD", "HTTP/1.1 200 OK\r\n\r\n"},
	{"connect", "CONNECT", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"},
	{"early hints", "GET", "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"},
	{"nine early hints", "POST", strings.Repeat("HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n", 9) + "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"},
	{"204 with length", "GET", "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n"},
	{"204 with length and body", "GET", "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\nhello"},
	{"204 with bad content length", "POST", "HTTP/1.1 204 No Content\r\nContent-Length: x\r\n\r\n"},
	{"204 chunked", "POST", "HTTP/1.1 204 No Content\r\nTransfer-Encoding: chunked\r\n\r\n"},
	{"304", "GET", "HTTP/1.1 304 Not Modified\r\n\r\n"},
	{"304 with length", "GET", "HTTP/1.1 304 Not Modified\r\nContent-Length: 7\r\nContent-Type: text/plain\r\n\r\n"},
	{"status 600", "GET", "HTTP/1.1 600 X\r\nContent-Length: 0\r\n\r\n"},
	{"status 099", "POST", "HTTP/1.1 099 Odd\r\nContent-Length: 0\r\n\r\n"},
	{"two-digit status", "GET", "HTTP/1.1 20 OK\r\nContent-Length: 0\r\n\r\n"},
	{"status glued to reason", "GET", "HTTP/1.1 200OK\r\nContent-Length: 0\r\n\r\n"},
	{"two spaces before status", "GET", "HTTP/1.1  200 OK\r\nContent-Length: 0\r\n\r\n"},
	{"control byte in reason", "GET", "HTTP/1.1 200 O\x01K\r\nContent-Length: 0\r\n\r\n"},
	{"bad status", "POST", "HTTP/1.1 2x0 OK\r\n\r\n"},
	{"http/1.2", "POST", "HTTP/1.2 200 OK\r\nContent-Length: 0\r\n\r\n"},
	{"not http", "POST", "SSH-2.0-OpenSSH\r\n\r\n"},
	{"empty answer", "POST", ""},
	{"leading blank line", "POST", "\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"},
	{"until close", "GET", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil close"},
	{"until close 1.1", "POST", "HTTP/1.1 200 OK\r\n\r\nrest"},
	{"until close, byteranges", "GET", "HTTP/1.1 200 OK\r\nContent-Type: multipart/byteranges; boundary=x\r\n\r\nrest"},
	{"both framings", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
	{"content length and chunked", "POST", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n"},
	{"chunked with bad content length", "POST", "HTTP/1.1 200 OK\r\nContent-Length: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n"},
	{"two content lengths", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx"},
	{"duplicate equal content lengths", "POST", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab"},
	{"conflicting content lengths", "POST", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab"},
	{"two transfer encodings", "GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
	{"gzip, chunked", "GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"},
	{"identity with length", "GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\nContent-Length: 1\r\n\r\nx"},
	{"identity transfer encoding", "POST", "HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\n\r\nab"},
	{"http/1.0 chunked", "POST", "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n"},
	{"content length -0", "POST", "HTTP/1.1 200 OK\r\nContent-Length: -0\r\n\r\n"},
	{"content length with a sign", "GET", "HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\nx"},
	{"content length padded", "POST", "HTTP/1.1 200 OK\r\nContent-Length:  2 \r\n\r\nab"},
	{"empty content length", "POST", "HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\nab"},
	{"bad content length", "POST", "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n"},
	{"long content length", "POST", "HTTP/1.1 200 OK\r\nContent-Length: 0000000000000002\r\n\r\nab"},
	{"huge content length", "POST", "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\nab"},
	{"connection close header", "POST", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx"},
	{"connection keep-alive 1.0", "POST", "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 1\r\n\r\nx"},
	{"pragma no-cache", "POST", "HTTP/1.1 200 OK\r\nPragma: no-cache\r\nContent-Length: 0\r\n\r\n"},
	{"trailer field", "GET", "HTTP/1.1 200 OK\r\nTrailer: X\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: 1\r\n\r\n"},
	{"trailer", "POST", "HTTP/1.1 200 OK\r\nTrailer: X-T\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\nX-T: 1\r\n\r\n"},
	{"malformed trailer", "POST", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\nno colon\r\n\r\n"},
	{"chunk extension", "POST", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;name=v\r\nab\r\n0;x\r\n\r\n"},
	{"bad chunk size", "POST", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n0\r\n\r\n"},
	{"huge chunk size", "POST", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffffff\r\nab\r\n0\r\n\r\n"},
	{"chunk without crlf", "POST", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX0\r\n\r\n"},
	{"cut chunk", "POST", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab"},
	{"101 switching", "POST", "HTTP/1.1 101 Switching Protocols\r\n\r\nrest"},
	// header lines
	{"folded header", "POST", "HTTP/1.1 200 OK\r\nX-A: 1\r\n 2\r\nContent-Length: 0\r\n\r\n"},
	{"control byte in value", "POST", "HTTP/1.1 200 OK\r\nX-A: a\x01b\r\nContent-Length: 0\r\n\r\n"},
	{"nul in value", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX: a\x00\r\n\r\n"},
	{"space before colon", "POST", "HTTP/1.1 200 OK\r\nX-A : 1\r\nContent-Length: 0\r\n\r\n"},
	{"space before colon of length", "GET", "HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n"},
	{"header without colon", "POST", "HTTP/1.1 200 OK\r\nNoColon\r\nContent-Length: 0\r\n\r\n"},
	{"bare LF", "GET", "HTTP/1.1 200 OK\nContent-Length: 0\r\n\r\n"},
	{"bare LF everywhere", "POST", "HTTP/1.1 200\n\n"},
	// found by fuzzing: a status under 100 frames a body; a head is
	// handed to net/http byte for byte
	{"fuzz: status 000", "POST", "HTTP/0.0 000 \nContent-Length:01\n\n"},
	{"fuzz: CR CR LF", "POST", "HTTP/0.0 000\r\r\n\n"},
}

// Outcome is what a client made of an answer.
type Outcome struct {
	Status   string
	Code     int
	Header   http.Header
	Body     string
	Length   int64
	TE       []string
	Close    bool
	Failed   bool // an error from the head or from reading the body
	Over     bool // a body longer than the input: framing went wrong
	Trailers http.Header
}

// ReadOutcome reads resp (or err) into an outcome, the body up to limit
// bytes, and closes the body.
func ReadOutcome(resp *http.Response, err error, limit int64) Outcome {
	if err != nil {
		return Outcome{Failed: true}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	o := Outcome{
		Status: resp.Status, Code: resp.StatusCode, Header: resp.Header, Body: string(body),
		Length: resp.ContentLength, TE: resp.TransferEncoding, Close: resp.Close,
		Failed: err != nil, Over: int64(len(body)) > limit, Trailers: resp.Trailer,
	}
	if len(o.Header) == 0 {
		o.Header = nil
	}
	return o
}

// NetHTTPOutcome reads raw as the answer to a request with method as
// net/http's Transport does: interim 1xx answers skipped, 101 final.
func NetHTTPOutcome(method string, raw []byte) Outcome {
	br := bufio.NewReaderSize(bytes.NewReader(raw), 4<<10)
	req := &http.Request{Method: method}
	for {
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			return ReadOutcome(nil, err, 0)
		}
		if resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
			continue
		}
		return ReadOutcome(resp, nil, int64(len(raw)))
	}
}
