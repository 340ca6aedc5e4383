package capture

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/benchturns"
)

// fastResponseSeeds are responses (heads and bodies) the fast parser reads.
var fastResponseSeeds = []string{
	"HTTP/1.1 200 OK\r\nCache-Control: no-cache, no-transform\r\nConnection: keep-alive\r\nContent-Type: text/event-stream\r\n" +
		"Mcp-Session-Id: S1\r\nDate: Sun, 29 Nov 2026 16:31:51 GMT\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"10\r\nevent: message\n\n\r\n0\r\n\r\nHTTP/1.1 200 OK\r\n",
	"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
	"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 404\r\ncontent-length: 5\r\nconnection: close\r\npragma: no-cache\r\n\r\nnope!",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: CHUNKED\r\nConnection: close, x\r\n\r\n3\r\nabc\r\n0\r\nX-T: 1\r\nx-t: 2\r\n\r\n",
	"HTTP/1.1 500 Internal  Error \r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\nabc\r\n0\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
}

// fastResponseFallbacks are responses outside the fast subset.
var fastResponseFallbacks = []struct{ name, raw, method string }{
	{"incomplete head", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n", "POST"},
	{"HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", "HEAD"},
	{"CONNECT", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", "CONNECT"},
	{"HTTP/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n", "GET"},
	{"1xx", "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n", "GET"},
	{"204", "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n", "GET"},
	{"304", "HTTP/1.1 304 Not Modified\r\n\r\n", "GET"},
	{"status 600", "HTTP/1.1 600 X\r\nContent-Length: 0\r\n\r\n", "GET"},
	{"two-digit status", "HTTP/1.1 20 OK\r\nContent-Length: 0\r\n\r\n", "GET"},
	{"status glued to reason", "HTTP/1.1 200OK\r\nContent-Length: 0\r\n\r\n", "GET"},
	{"two spaces before status", "HTTP/1.1  200 OK\r\nContent-Length: 0\r\n\r\n", "GET"},
	{"control byte in reason", "HTTP/1.1 200 O\x01K\r\nContent-Length: 0\r\n\r\n", "GET"},
	{"no framing", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil close", "GET"},
	{"both framings", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "GET"},
	{"two Content-Lengths", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx", "GET"},
	{"two Transfer-Encodings", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "GET"},
	{"gzip, chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", "GET"},
	{"identity", "HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\nContent-Length: 1\r\n\r\nx", "GET"},
	{"Trailer", "HTTP/1.1 200 OK\r\nTrailer: X\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nX: 1\r\n\r\n", "GET"},
	{"obs-fold", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX: 1\r\n 2\r\n\r\n", "GET"},
	{"space before colon", "HTTP/1.1 200 OK\r\nContent-Length : 0\r\n\r\n", "GET"},
	{"bare LF", "HTTP/1.1 200 OK\nContent-Length: 0\r\n\r\n", "GET"},
	{"control byte in value", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX: a\x00\r\n\r\n", "GET"},
	{"Content-Length with a sign", "HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\nx", "GET"},
}

// FuzzFastResponseHead: whenever the fast parser reads a response,
// http.ReadResponse reads the same bytes as the same response, whose body
// (read in part, then closed; or whole) gives the same bytes, end,
// trailer, and leaves the reader at the same place.
func FuzzFastResponseHead(f *testing.F) {
	for _, s := range fastResponseSeeds {
		f.Add(s, "POST", uint16(3), uint16(4096))
		f.Add(s, "GET", uint16(1000), uint16(len(s)-10))
	}
	for _, tc := range fastResponseFallbacks {
		f.Add(tc.raw, tc.method, uint16(2), uint16(4096))
	}
	f.Fuzz(func(t *testing.T, raw, method string, k, size uint16) {
		// The buffer's size bounds a trailer: fuzzed too.
		req := &http.Request{Method: method}
		fastR := bufio.NewReaderSize(strings.NewReader(raw), 16+int(size))
		fastR.Peek(1)
		fastBuf := fastR.Buffered()
		fast := parseFastResponse(fastR, req)
		if fast == nil {
			if fastR.Buffered() != fastBuf {
				t.Fatalf("declined %q after consuming bytes", raw)
			}
			return
		}
		wantR := bufio.NewReaderSize(strings.NewReader(raw), 16+int(size))
		want, err := http.ReadResponse(wantR, req)
		if err != nil {
			t.Fatalf("fast parser read %q, http.ReadResponse refuses it: %v", raw, err)
		}
		compareResponses(t, raw, "head", fast, want)
		fastBody, fastErr := readSome(fast.Body, int(k))
		wantBody, wantErr := readSome(want.Body, int(k))
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
	})
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

// compareResponses fails t unless the fast parser's response has the
// fields of http.ReadResponse's.
func compareResponses(t *testing.T, raw, when string, fast, want *http.Response) {
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
		t.Fatalf("%q, %s:\nfast parser       %+v\nhttp.ReadResponse %+v", raw, when, got, w)
	}
}

// TestFastResponseFallbacks: a response outside the fast subset is left
// to http.ReadResponse, untouched.
func TestFastResponseFallbacks(t *testing.T) {
	for _, tc := range fastResponseFallbacks {
		t.Run(tc.name, func(t *testing.T) {
			br := bufio.NewReader(strings.NewReader(tc.raw))
			br.Peek(1)
			n := br.Buffered()
			if resp := parseFastResponse(br, &http.Request{Method: tc.method}); resp != nil || br.Buffered() != n {
				t.Errorf("%q: read by the fast parser", tc.raw)
			}
		})
	}
}

// TestFastResponseAccepts: the seeds take the fast path.
func TestFastResponseAccepts(t *testing.T) {
	for _, raw := range fastResponseSeeds {
		br := bufio.NewReader(strings.NewReader(raw))
		br.Peek(1)
		if parseFastResponse(br, &http.Request{Method: "POST"}) == nil {
			t.Errorf("declined %q", raw)
		}
	}
}

// BenchmarkResponseHead: reading the head of the reference server's answer
// to an echo call (an event stream) with the fast parser (ours) and with
// http.ReadResponse (baseline), taking turns; see benchturns.Run.
func BenchmarkResponseHead(b *testing.B) {
	raw := fastResponseSeeds[0]
	src := strings.NewReader(raw)
	br := bufio.NewReaderSize(src, 4<<10)
	post := &http.Request{Method: http.MethodPost}
	reset := func() {
		src.Reset(raw)
		br.Reset(src)
		br.Peek(1)
	}
	benchturns.Run(b, "head", func() bool {
		reset()
		return parseFastResponse(br, post) != nil
	}, func() bool {
		reset()
		resp, _ := http.ReadResponse(br, post)
		return resp != nil
	})
}
