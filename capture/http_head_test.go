package capture

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/mcptape/mcptape/internal/benchturns"
)

// fastHeadSeeds are request heads (with bodies) the fast parser accepts.
var fastHeadSeeds = []string{
	"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: Go-http-client/1.1\r\nContent-Length: 2\r\nAccept: application/json, text/event-stream\r\n" +
		"Content-Type: application/json\r\nMcp-Protocol-Version: 2025-06-18\r\nMcp-Session-Id: S1\r\n\r\n{}",
	"post /mcp?a=1&b=%20#f HTTP/1.1\r\nhost: h\r\ncontent-length: 0\r\nconnection: keep-alive\r\naccept: */*\r\nsec-fetch-mode: cors\r\n\r\n",
	"GET /mcp HTTP/1.1\r\nHost: h\r\nConnection: x-a, CLOSE \r\nX-A: 1\r\nX-A:2\r\nX-Empty:\r\nX-Tab:\t a\tb \t\r\n\r\n",
	"GET /a.b/~c_d-e/ HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\nE: 5\r\nF: 6\r\nG: 7\r\nH: 8\r\nI: 9\r\nJ: 10\r\nK: 11\r\nL: 12\r\nM: 13\r\nN: 14\r\nA: 15\r\n\r\n",
	"DELETE //x/../y HTTP/1.1\r\nHost: [::1]:80\r\nPragma: no-cache\r\nX-Long-Header-Name-Beyond-Thirty-Two-bytes: v\r\n\r\n",
	"GET /%41%2F HTTP/1.1\r\nHost: h\r\nPragma: no-cache\r\nCache-Control: max-age=0\r\nX-Obs: caf\xc3\xa9\r\n\r\n",
	"PUT /a HTTP/1.1\r\nHost: h\r\nContent-Length: 007\r\n\r\n1234567",
}

// FuzzFastRequestHead: whenever the fast parser accepts bytes,
// http.ReadRequest accepts them too, reads a head of the same length and
// gives the same request and the same body bytes.
func FuzzFastRequestHead(f *testing.F) {
	for _, s := range fastHeadSeeds {
		f.Add(s)
	}
	for _, tc := range fastHeadFallbacks {
		f.Add(tc.raw)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		fast, n := parseFastHead([]byte(raw))
		if fast == nil {
			if n != 0 {
				t.Fatalf("declined with n=%d", n)
			}
			return
		}
		src := strings.NewReader(raw)
		br := bufio.NewReaderSize(src, len(raw)+16)
		want, err := http.ReadRequest(br)
		if err != nil {
			t.Fatalf("fast parser accepted %q, http.ReadRequest refuses it: %v", raw, err)
		}
		if consumed := len(raw) - br.Buffered() - src.Len(); consumed != n {
			t.Fatalf("%q: fast head of %d bytes, http.ReadRequest read %d", raw, n, consumed)
		}
		compareRequests(t, raw, fast, want)
		if err := checkRequestHead(fast); err != nil && fastLeanable(fast) {
			t.Fatalf("%q: fast parser accepted a head checkRequestHead refuses: %v", raw, err)
		}
		wantBody, err := io.ReadAll(want.Body)
		fastBody := []byte(raw[n:min(len(raw), n+int(fast.ContentLength))])
		if err != nil {
			wantBody = nil // a body cut short: the fast one is cut the same
			if len(fastBody) == int(fast.ContentLength) {
				t.Fatalf("%q: http.ReadRequest's body fails (%v), the fast one is whole", raw, err)
			}
		} else if !bytes.Equal(fastBody, wantBody) {
			t.Fatalf("%q: body %q, http.ReadRequest's %q", raw, fastBody, wantBody)
		}
	})
}

// compareRequests fails t unless the fast parser's request has the fields
// of http.ReadRequest's.
func compareRequests(t *testing.T, raw string, fast, want *http.Request) {
	t.Helper()
	type fields struct {
		Method, RequestURI, Proto, Host string
		ProtoMajor, ProtoMinor          int
		URL                             any
		Header                          http.Header
		ContentLength                   int64
		Close                           bool
		TransferEncoding                []string
		Trailer                         http.Header
		NoBody                          bool
	}
	of := func(r *http.Request) fields {
		return fields{r.Method, r.RequestURI, r.Proto, r.Host, r.ProtoMajor, r.ProtoMinor, *r.URL, r.Header,
			r.ContentLength, r.Close, r.TransferEncoding, r.Trailer, r.Body == http.NoBody}
	}
	if got, w := of(fast), of(want); !reflect.DeepEqual(got, w) {
		t.Fatalf("%q:\nfast parser    %+v\nhttp.ReadRequest %+v", raw, got, w)
	}
}

// TestFastRequestHeadAccepts: typical heads take the fast path, with the
// request http.ReadRequest reads.
func TestFastRequestHeadAccepts(t *testing.T) {
	for _, raw := range fastHeadSeeds {
		fast, n := parseFastHead([]byte(raw))
		if fast == nil {
			t.Errorf("declined %q", raw)
			continue
		}
		want, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
		if err != nil {
			t.Fatal(err)
		}
		compareRequests(t, raw, fast, want)
		if head := raw[:n]; !strings.HasSuffix(head, "\r\n\r\n") || strings.Count(head, "\r\n\r\n") != 1 {
			t.Errorf("%q: head length %d", raw, n)
		}
	}
}

// TestFastRequestHeadReuse: a request parsed into the fastRequest of an
// earlier one, taken or declined (a lean connection's, reused), is the
// request http.ReadRequest reads, with nothing left of the earlier one.
func TestFastRequestHeadReuse(t *testing.T) {
	var before []string
	before = append(before, fastHeadSeeds...)
	for _, tc := range fastHeadFallbacks {
		before = append(before, tc.raw)
	}
	for _, first := range before {
		for _, raw := range fastHeadSeeds {
			var r fastRequest
			parseFastInto([]byte(first), &r)
			fast, _ := parseFastInto([]byte(raw), &r)
			if fast == nil {
				t.Fatalf("declined %q after %q", raw, first)
			}
			want, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
			if err != nil {
				t.Fatal(err)
			}
			compareRequests(t, raw, fast, want)
		}
	}
}

// fastHeadFallbacks are heads outside the fast subset, each for one reason.
var fastHeadFallbacks = []struct{ name, raw string }{
	{"incomplete head", "GET / HTTP/1.1\r\nHost: h\r\n"},
	{"HTTP/1.0", "GET / HTTP/1.0\r\nHost: h\r\n\r\n"},
	{"HTTP/1.1 lower case", "GET / http/1.1\r\nHost: h\r\n\r\n"},
	{"HTTP/2.0", "GET / HTTP/2.0\r\nHost: h\r\n\r\n"},
	{"extra space in the request line", "GET / HTTP/1.1 \r\nHost: h\r\n\r\n"},
	{"space in target", "GET /a b HTTP/1.1\r\nHost: h\r\n\r\n"},
	{"absolute-form target", "GET http://h/ HTTP/1.1\r\nHost: h\r\n\r\n"},
	{"asterisk-form target", "OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n"},
	{"authority-form CONNECT", "CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n"},
	{"origin-form CONNECT", "CONNECT /rpc HTTP/1.1\r\nHost: h\r\n\r\n"},
	{"method not a token", "GE\"T / HTTP/1.1\r\nHost: h\r\n\r\n"},
	{"empty method", " / HTTP/1.1\r\nHost: h\r\n\r\n"},
	{"bad escape in target", "GET /%zz HTTP/1.1\r\nHost: h\r\n\r\n"},
	{"control byte in target", "GET /\x01 HTTP/1.1\r\nHost: h\r\n\r\n"},
	{"bare LF request line", "GET / HTTP/1.1\nHost: h\r\n\r\n"},
	{"bare LF header line", "GET / HTTP/1.1\r\nHost: h\nX: 1\r\n\r\n"},
	{"bare LF blank line", "GET / HTTP/1.1\r\nHost: h\r\n\n\r\n\r\n"},
	{"bare CR", "GET / HTTP/1.1\r\nHost: h\rX: 1\r\n\r\n"},
	{"obs-fold", "GET / HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n 2\r\n\r\n"},
	{"leading white space", "GET / HTTP/1.1\r\n Host: h\r\n\r\n"},
	{"space before colon", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length : 2\r\n\r\n{}"},
	{"no colon", "GET / HTTP/1.1\r\nHost: h\r\nX-A\r\n\r\n"},
	{"empty name", "GET / HTTP/1.1\r\nHost: h\r\n: v\r\n\r\n"},
	{"name not a token", "GET / HTTP/1.1\r\nHost: h\r\nX(A): v\r\n\r\n"},
	{"non-ASCII name", "GET / HTTP/1.1\r\nHost: h\r\nX-\xc3\xa9: v\r\n\r\n"},
	{"control byte in value", "GET / HTTP/1.1\r\nHost: h\r\nX-A: a\x00b\r\n\r\n"},
	{"DEL in value", "GET / HTTP/1.1\r\nHost: h\r\nX-A: a\x7fb\r\n\r\n"},
	{"no Host", "GET / HTTP/1.1\r\nX-A: 1\r\n\r\n"},
	{"empty Host", "GET / HTTP/1.1\r\nHost:\r\n\r\n"},
	{"two Hosts", "GET / HTTP/1.1\r\nHost: h\r\nhost: h\r\n\r\n"},
	{"invalid Host", "GET / HTTP/1.1\r\nHost: h i\r\n\r\n"},
	{"two Content-Lengths", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}"},
	{"Content-Length with a sign", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: +2\r\n\r\n{}"},
	{"Content-Length list", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2, 2\r\n\r\n{}"},
	{"empty Content-Length", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length:\r\n\r\n"},
	{"huge Content-Length", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999\r\n\r\n"},
	{"body too large for the lean path", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1048577\r\n\r\n"},
	{"Transfer-Encoding", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
	{"Transfer-Encoding and Content-Length", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n"},
	{"Trailer", "GET / HTTP/1.1\r\nHost: h\r\nTrailer: X\r\n\r\n"},
	{"Expect", "POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n{}"},
	{"Upgrade", "GET / HTTP/1.1\r\nHost: h\r\nConnection: upgrade\r\nUpgrade: websocket\r\n\r\n"},
}

// TestFastRequestHeadFallbacks: a head outside the fast subset is declined
// by the fast parser or, if it parses, not served by the lean path (so
// that http.ReadRequest reads it from the untouched bytes).
func TestFastRequestHeadFallbacks(t *testing.T) {
	for _, tc := range fastHeadFallbacks {
		t.Run(tc.name, func(t *testing.T) {
			req, n := parseFastHead([]byte(tc.raw))
			if req != nil && fastLeanable(req) {
				t.Errorf("%q: fast path taken (head of %d bytes)", tc.raw, n)
			}
		})
	}
}

// TestFastBody: the body reader stops at its length, and an early end is
// io.ErrUnexpectedEOF.
func TestFastBody(t *testing.T) {
	for _, tc := range []struct {
		src     string
		n       int64
		want    string
		wantErr error
	}{
		{"abcdef", 3, "abc", nil},
		{"abc", 3, "abc", nil},
		{"ab", 3, "ab", io.ErrUnexpectedEOF},
		{"", 1, "", io.ErrUnexpectedEOF},
	} {
		b := &fixedBody{r: bufio.NewReader(strings.NewReader(tc.src)), n: tc.n}
		got, err := io.ReadAll(b)
		if string(got) != tc.want || err != tc.wantErr {
			t.Errorf("%q/%d: %q, %v; want %q, %v", tc.src, tc.n, got, err, tc.want, tc.wantErr)
		}
	}
}

// BenchmarkRequestHead: reading a typical MCP request head (a Go client's
// POST) with the fast parser (ours) and with http.ReadRequest (baseline),
// taking turns in rounds; reported: the time per head of each and ratio,
// ours over the baseline.
func BenchmarkRequestHead(b *testing.B) {
	raw := []byte(fastHeadSeeds[0])
	br := bufio.NewReaderSize(nil, 4<<10)
	src := bytes.NewReader(nil)
	benchturns.Run(b, "head", func() bool {
		req, _ := parseFastHead(raw)
		return req != nil
	}, func() bool {
		src.Reset(raw)
		br.Reset(src)
		req, _ := http.ReadRequest(br)
		return req != nil
	})
}

// TestTargetAsIs: the lean path serves only targets that net/http would
// forward unchanged.
func TestTargetAsIs(t *testing.T) {
	for _, tc := range []struct {
		target string
		want   bool
	}{
		{"/mcp", true}, {"/a/b.c~d_e-f", true}, {"/mcp?sessionId=1&x", true}, {"/%41%2F", true}, {"/a?", true},
		{"/\"00", false}, {"/a b", false}, {"/a<b>", false}, {"/é", false},
	} {
		u, err := url.ParseRequestURI(tc.target)
		if err != nil {
			t.Fatal(err)
		}
		if got := targetAsIs(&http.Request{RequestURI: tc.target, URL: u}); got != tc.want {
			t.Errorf("targetAsIs(%q) = %v, want %v", tc.target, got, tc.want)
		}
	}
}

// TestLeadingCRLF counts the blank-line bytes skipped after a POST.
func TestLeadingCRLF(t *testing.T) {
	for in, want := range map[string]int{"": 0, "GET": 0, "\r\nGET": 2, "\n\n\r\r\nG": 5, "\r": 1} {
		if got := leadingCRLF([]byte(in)); got != want {
			t.Errorf("leadingCRLF(%q) = %d, want %d", in, got, want)
		}
	}
}

// TestFastRequestHeadText: a request head of the same bytes as the last
// one parsed into the same fastRequest is read from the last one's text
// (no copy); a head of other bytes gets its own, and reads as it says.
func TestFastRequestHeadText(t *testing.T) {
	const a = "POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nMcp-Session-Id: S1\r\n\r\n"
	const b = "POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nMcp-Session-Id: S2\r\n\r\n"
	var r fastRequest
	var texts []*byte
	for i, raw := range []string{a, a, b} {
		req, n := parseFastInto([]byte(raw+"{}"), &r)
		if req == nil || n != len(raw) {
			t.Fatalf("request %d declined (%d)", i, n)
		}
		want, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw + "{}")))
		if err != nil {
			t.Fatal(err)
		}
		compareRequests(t, raw, req, want)
		texts = append(texts, unsafe.StringData(req.Header["Mcp-Session-Id"][0]))
	}
	if texts[1] != texts[0] {
		t.Error("the same head was read from a new text")
	}
	if texts[2] == texts[1] {
		t.Error("another head was read from the last text")
	}
}
