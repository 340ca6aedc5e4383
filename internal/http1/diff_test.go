package http1

// The differential suite: the reader of this package against net/http's
// (http.ReadResponse, and the Transport's loop over interim responses),
// on the corpus of http1test and on fuzzed bytes. It holds the fast
// reader to http.ReadResponse's result (head fields, body read in part,
// then closed, or whole; trailer; errors; the bytes left on the
// connection) and Conn.ReadResponse to what net/http's client makes of
// the same bytes.

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/benchturns"
	"github.com/mcptape/mcptape/internal/http1/http1test"
)

// memConn is a Conn reading raw, with a read buffer of size bytes.
func memConn(raw []byte, size int) *Conn {
	c := &Conn{}
	c.lim.r = bytes.NewReader(raw)
	c.BR = bufio.NewReaderSize(&c.lim, size)
	return c
}

// ourOutcome reads raw as the answer to a request with method with
// Conn.ReadResponse (interim answers skipped), and returns the outcome
// and the bytes left after the body.
func ourOutcome(method string, raw []byte) (http1test.Outcome, string) {
	c := memConn(raw, BufSize)
	resp, err := c.ReadResponse(&http.Request{Method: method}, nil)
	o := http1test.ReadOutcome(resp, err, int64(len(raw)))
	rest, _ := io.ReadAll(c.BR)
	return o, string(rest)
}

// netHTTPOutcome reads raw as net/http's Transport does: interim 1xx
// answers skipped, 101 final.
func netHTTPOutcome(method string, raw []byte) (http1test.Outcome, string) {
	br := bufio.NewReaderSize(bytes.NewReader(raw), BufSize)
	req := &http.Request{Method: method}
	for {
		resp, err := http.ReadResponse(br, req)
		if err == nil && resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
			continue
		}
		o := http1test.ReadOutcome(resp, err, int64(len(raw)))
		rest, _ := io.ReadAll(br)
		return o, string(rest)
	}
}

// TestReadsAsNetHTTP reads each answer of the corpus with Conn and with
// net/http, in memory, for its method and for HEAD.
func TestReadsAsNetHTTP(t *testing.T) {
	for _, a := range http1test.Answers {
		for _, method := range []string{a.Method, http.MethodHead} {
			t.Run(a.Name+"/"+method, func(t *testing.T) {
				ours, ourRest := ourOutcome(method, []byte(a.Raw))
				theirs, theirRest := netHTTPOutcome(method, []byte(a.Raw))
				if !reflect.DeepEqual(ours, theirs) {
					t.Errorf("ours\n%+v\nnet/http\n%+v", ours, theirs)
				}
				if !ours.Failed && ourRest != theirRest {
					t.Errorf("left %q, net/http %q", ourRest, theirRest)
				}
			})
		}
	}
}

// TestReuseReadsAsNetHTTP: a Conn with Reuse reads each answer of the
// corpus, after any other read to its end on the same Conn (in the same
// memory), as net/http does: nothing of the earlier response is left.
func TestReuseReadsAsNetHTTP(t *testing.T) {
	for _, first := range http1test.Answers {
		for _, a := range http1test.Answers {
			c := memConn([]byte(first.Raw), BufSize)
			c.Reuse = true
			if resp, err := c.ReadResponse(&http.Request{Method: first.Method}, nil); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			c.lim.r = bytes.NewReader([]byte(a.Raw))
			c.BR.Reset(&c.lim)
			resp, err := c.ReadResponse(&http.Request{Method: a.Method}, nil)
			ours := http1test.ReadOutcome(resp, err, int64(len(a.Raw)))
			theirs, _ := netHTTPOutcome(a.Method, []byte(a.Raw))
			if !reflect.DeepEqual(ours, theirs) {
				t.Errorf("%s after %s:\nours\n%+v\nnet/http\n%+v", a.Name, first.Name, ours, theirs)
			}
		}
	}
}

// fastAnswers name the answers of the corpus the fast reader takes (the
// first head of, for the interim ones); it leaves every other one to
// http.ReadResponse, untouched.
var fastAnswers = []string{
	"plain", "event stream", "json", "accepted", "empty event stream", "lower-case names", "repeated names",
	"chunked upper case, trailer", "chunked with trailer", "cut chunked, reason with spaces", "short body", "bad chunk",
	"error body", "interim 100", "interim then 204", "http/1.0", "head with content length", "head without length",
	"early hints", "nine early hints", "204 with length", "204 with length and body", "304", "304 with length",
	"status 600", "connection close header", "connection keep-alive 1.0", "pragma no-cache", "chunk extension",
	"bad chunk size", "huge chunk size", "chunk without crlf", "cut chunk", "malformed trailer", "101 switching",
	"content length padded",
}

// TestFastSubset: the fast reader takes the answers of fastAnswers, for
// their method, and declines every other one without consuming a byte.
func TestFastSubset(t *testing.T) {
	for _, a := range http1test.Answers {
		br := bufio.NewReader(strings.NewReader(a.Raw))
		br.Peek(1)
		n := br.Buffered()
		took := parseFast(br, &http.Request{Method: a.Method}) != nil
		if want := slices.Contains(fastAnswers, a.Name); took != want {
			t.Errorf("%s: taken %v, want %v", a.Name, took, want)
		}
		if !took && br.Buffered() != n {
			t.Errorf("%s: declined after consuming bytes", a.Name)
		}
	}
}

// fuzzMethods are the methods the fuzz target picks from.
var fuzzMethods = []string{"POST", "GET", "HEAD", "DELETE", "CONNECT"}

// FuzzResponse holds the reader to net/http's on any bytes:
//   - whenever the fast reader takes a head, http.ReadResponse reads the
//     same bytes as the same response, whose body (read in part, then
//     closed; or whole) gives the same bytes, end and trailer, and leaves
//     the reader at the same place (the buffer's size, which bounds a
//     trailer, is fuzzed too);
//   - Conn.ReadResponse, with its body read whole, gives what net/http's
//     client makes of the bytes, never a body longer than the input, a
//     status in range and canonical header names.
func FuzzResponse(f *testing.F) {
	for _, a := range http1test.Answers {
		m := uint8(slices.Index(fuzzMethods, a.Method))
		f.Add([]byte(a.Raw), m, uint16(3), uint16(4096))
		f.Add([]byte(a.Raw), uint8(2), uint16(1000), uint16(max(len(a.Raw)-10, 0)))
	}
	f.Fuzz(func(t *testing.T, raw []byte, m uint8, k, size uint16) {
		method := fuzzMethods[int(m)%len(fuzzMethods)]
		checkFast(t, raw, method, int(k), 16+int(size))
		ours, ourRest := ourOutcome(method, raw)
		theirs, theirRest := netHTTPOutcome(method, raw)
		if ours.Over {
			t.Fatalf("%q: body longer than the input: %+v", raw, ours)
		}
		if !reflect.DeepEqual(ours, theirs) {
			t.Fatalf("%q:\nours\n%+v\nnet/http\n%+v", raw, ours, theirs)
		}
		if !ours.Failed && ourRest != theirRest {
			t.Fatalf("%q: left %q, net/http %q", raw, ourRest, theirRest)
		}
		if ours.Failed {
			return
		}
		if ours.Code < 0 || ours.Code > 999 {
			t.Fatalf("accepted status %d", ours.Code)
		}
		for k := range ours.Header {
			if k != http.CanonicalHeaderKey(k) {
				t.Fatalf("header name %q not canonical", k)
			}
		}
	})
}

// checkFast compares the fast reader with http.ReadResponse on raw, the
// answer to a request with method, read with a buffer of size bytes: k
// bytes of the body read, then the body closed.
func checkFast(t *testing.T, raw []byte, method string, k, size int) {
	t.Helper()
	req := &http.Request{Method: method}
	fastR := bufio.NewReaderSize(bytes.NewReader(raw), size)
	fastR.Peek(1)
	fastBuf := fastR.Buffered()
	fast := parseFast(fastR, req)
	if fast == nil {
		if fastR.Buffered() != fastBuf {
			t.Fatalf("declined %q after consuming bytes", raw)
		}
		return
	}
	wantR := bufio.NewReaderSize(bytes.NewReader(raw), size)
	want, err := http.ReadResponse(wantR, req)
	if err != nil {
		t.Fatalf("fast reader read %q, http.ReadResponse refuses it: %v", raw, err)
	}
	compareResponses(t, raw, "head", fast, want)
	fastBody, fastErr := readSome(fast.Body, k)
	wantBody, wantErr := readSome(want.Body, k)
	if fastBody != wantBody || !sameError(fastErr, wantErr) {
		t.Fatalf("%q: body %q, %v; http.ReadResponse's %q, %v", raw, fastBody, fastErr, wantBody, wantErr)
	}
	fastErr, wantErr = fast.Body.Close(), want.Body.Close()
	if !sameError(fastErr, wantErr) {
		t.Fatalf("%q: Close: %v; http.ReadResponse's %v", raw, fastErr, wantErr)
	}
	compareResponses(t, raw, "after the body", fast, want)
	fastRest, _ := io.ReadAll(fastR)
	wantRest, _ := io.ReadAll(wantR)
	if string(fastRest) != string(wantRest) {
		t.Fatalf("%q: left %q, http.ReadResponse %q", raw, fastRest, wantRest)
	}
}

// TestFastAsReadResponse runs checkFast on the corpus, for each answer's
// method and HEAD, with small and large reads and buffers.
func TestFastAsReadResponse(t *testing.T) {
	for _, a := range http1test.Answers {
		for _, method := range []string{a.Method, http.MethodHead} {
			for _, k := range []int{0, 3, 1000} {
				for _, size := range []int{16 + len(a.Raw)/2, 4096} {
					checkFast(t, []byte(a.Raw), method, k, size)
				}
			}
		}
	}
}

// readSome reads up to k bytes of body, to its end or an error.
func readSome(body io.Reader, k int) (string, error) {
	b, err := io.ReadAll(io.LimitReader(body, int64(k)))
	return string(b), err
}

// sameError reports whether a and b are both nil, or the same known
// error, or both other errors of the same text.
func sameError(a, b error) bool {
	switch {
	case a == nil || b == nil:
		return a == b
	case errors.Is(a, io.ErrUnexpectedEOF) || errors.Is(b, io.ErrUnexpectedEOF):
		return errors.Is(a, io.ErrUnexpectedEOF) && errors.Is(b, io.ErrUnexpectedEOF)
	case errors.Is(a, http.ErrBodyReadAfterClose) || errors.Is(b, http.ErrBodyReadAfterClose):
		return errors.Is(a, http.ErrBodyReadAfterClose) && errors.Is(b, http.ErrBodyReadAfterClose)
	}
	return a.Error() == b.Error()
}

// compareResponses fails t unless the fast reader's response has the
// fields of http.ReadResponse's.
func compareResponses(t *testing.T, raw []byte, when string, fast, want *http.Response) {
	t.Helper()
	type fields struct {
		Status, Proto          string
		StatusCode             int
		ProtoMajor, ProtoMinor int
		Header, Trailer        http.Header
		ContentLength          int64
		TransferEncoding       []string
		Close, Uncompressed    bool
		Request                *http.Request
		NoBody                 bool
	}
	of := func(r *http.Response) fields {
		return fields{r.Status, r.Proto, r.StatusCode, r.ProtoMajor, r.ProtoMinor, r.Header, r.Trailer, r.ContentLength,
			r.TransferEncoding, r.Close, r.Uncompressed, r.Request, r.Body == http.NoBody}
	}
	if got, w := of(fast), of(want); !reflect.DeepEqual(got, w) {
		t.Fatalf("%q, %s:\nfast reader       %+v\nhttp.ReadResponse %+v", raw, when, got, w)
	}
}

// benchHead is a typical answer head of an MCP server to a POST (an
// event stream).
const benchHead = "HTTP/1.1 200 OK\r\nCache-Control: no-cache, no-transform\r\nConnection: keep-alive\r\n" +
	"Content-Type: text/event-stream\r\nMcp-Session-Id: S1\r\nDate: Sun, 29 Nov 2026 16:31:51 GMT\r\n" +
	"Transfer-Encoding: chunked\r\n\r\n"

// BenchmarkResponseHead: reading a typical answer head with the fast
// reader (ours) and with http.ReadResponse (baseline), taking turns; see
// benchturns.Run.
func BenchmarkResponseHead(b *testing.B) {
	src := strings.NewReader(benchHead)
	br := bufio.NewReaderSize(src, BufSize)
	post := &http.Request{Method: http.MethodPost}
	reset := func() {
		src.Reset(benchHead)
		br.Reset(src)
		br.Peek(1)
	}
	benchturns.Run(b, "head", func() bool {
		reset()
		return parseFast(br, post) != nil
	}, func() bool {
		reset()
		resp, _ := http.ReadResponse(br, post)
		return resp != nil
	})
}

// TestHeadMemory: a head of many short lines costs the reader no more
// than net/http's (the lean client's reader once sized its header map
// and value slice by the lines of a head, many times what net/http
// allocates).
func TestHeadMemory(t *testing.T) {
	raw := []byte("HTTP/1.1 200 OK\r\n" + strings.Repeat("a:\r\n", 1<<18) + "Content-Length: 0\r\n\r\n")
	allocated := func(read func()) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		read()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	ours := allocated(func() { ourOutcome("POST", raw) })
	theirs := allocated(func() { netHTTPOutcome("POST", raw) })
	t.Logf("ours %d bytes, net/http %d bytes for a %d-byte head", ours, theirs, len(raw))
	if ours > 2*theirs {
		t.Errorf("reader allocated %d bytes, net/http %d", ours, theirs)
	}
}
