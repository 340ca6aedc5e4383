package httphead

import (
	"bufio"
	"maps"
	"net/http"
	"net/textproto"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// headSeeds are response heads (and what follows them) for FuzzHead.
var headSeeds = []string{
	"HTTP/1.1 200 OK\r\nCache-Control: no-cache, no-transform\r\nConnection: keep-alive\r\nContent-Type: text/event-stream\r\n" +
		"Mcp-Session-Id: S1\r\nDate: Sun, 29 Nov 2026 16:31:51 GMT\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n",
	"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
	"HTTP/1.0 404\r\ncontent-length: 5\r\nconnection: Keep-Alive\r\npragma: no-cache\r\n\r\nnope!",
	"HTTP/1.1 500 Internal  Error \r\nConnection: x, CLOSE \r\nX-A: 1\r\nx-a:2\r\nX-Empty:\r\nX-Tab:\t a\tb \t\r\nContent-Length: 007\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: +1\r\n\r\nx",
	"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nPragma: no-cache\r\nCache-Control: max-age=0\r\nX-Obs: caf\xc3\xa9\r\n\r\nx",
	"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n",
	"HTTP/1.1 200 OK\r\nX: 1\r\n 2\r\n\r\n",
	"HTTP/1.1 200 OK\r\nX : 1\r\n\r\n",
	"HTTP/1.1 200 OK\nX: 1\r\n\r\n",
}

// FuzzHead: whenever the primitives take a whole response head (each line
// cut with CutLine, the status line taken by ParseStatusLine, each field
// line by SplitHeaderLine), net/http reads it the same way: the status
// line as http.ReadResponse does, the fields (gathered with AddValue) as
// net/textproto does, ending at the same byte. For a head framed by one
// Content-Length and no Transfer-Encoding, http.ReadResponse takes the
// length exactly when ParseDigits does, the same length, and comes to the
// header and Close that CloseAfter and PragmaCacheControl come to.
func FuzzHead(f *testing.F) {
	for _, s := range headSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		line, rest, ok := CutLine(raw)
		if !ok {
			return
		}
		minor, code, status, ok := ParseStatusLine(line)
		if !ok {
			return
		}
		h := http.Header{}
		var pool [4]string
		values := pool[:]
		n := len(line) + 2
		for {
			var field string
			if field, rest, ok = CutLine(rest); !ok {
				return
			}
			n += len(field) + 2
			if field == "" {
				break
			}
			name, value, ok := SplitHeaderLine(field)
			if !ok {
				return
			}
			AddValue(h, name, value, &values)
		}
		checkStatusAsNetHTTP(t, line, minor, code, status)

		src := strings.NewReader(raw[len(line)+2:])
		br := bufio.NewReader(src)
		want, err := textproto.NewReader(br).ReadMIMEHeader()
		if err != nil {
			t.Fatalf("%q taken, net/textproto refuses its fields: %v", raw, err)
		}
		if !reflect.DeepEqual(h, http.Header(want)) {
			t.Fatalf("%q: fields %q; net/textproto %q", raw, h, want)
		}
		if read := len(raw) - len(line) - 2 - src.Len() - br.Buffered(); read != n-len(line)-2 {
			t.Fatalf("%q: a head of %d bytes; net/textproto read %d after the status line", raw, n, read)
		}

		cl := h["Content-Length"]
		if len(cl) != 1 || h["Transfer-Encoding"] != nil || code < 200 || code == 204 || code == 304 {
			return
		}
		length, lengthOK := ParseDigits(cl[0])
		resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(raw[:n])), &http.Request{Method: http.MethodGet})
		if (err == nil) != lengthOK {
			t.Fatalf("%q: ParseDigits(%q) ok %v; http.ReadResponse: %v", raw, cl[0], lengthOK, err)
		}
		if err != nil {
			return
		}
		hh := maps.Clone(h)
		closeAfter := CloseAfter(hh, minor)
		PragmaCacheControl(hh)
		if resp.ContentLength != length || resp.Close != closeAfter || !reflect.DeepEqual(hh, resp.Header) {
			t.Fatalf("%q: length %d, close %v, header %q\nhttp.ReadResponse: %d, %v, %q",
				raw, length, closeAfter, hh, resp.ContentLength, resp.Close, resp.Header)
		}
	})
}

// FuzzParseDigits: ParseDigits is strconv.ParseUint(s, 10, 63).
func FuzzParseDigits(f *testing.F) {
	for _, s := range []string{"0", "007", "9223372036854775807", "9223372036854775808", "", "+1", "-0", " 1", "1_0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := ParseDigits(s)
		want, err := strconv.ParseUint(s, 10, 63)
		if ok != (err == nil) || ok && got != int64(want) {
			t.Fatalf("ParseDigits(%q) = %d, %v; strconv.ParseUint: %d, %v", s, got, ok, want, err)
		}
	})
}

// FuzzReadTrailer: ReadTrailer reads any trailer section, from a reader
// of any size, as net/http does (see TestReadTrailer).
func FuzzReadTrailer(f *testing.F) {
	for _, tc := range trailerCases {
		f.Add(tc.rest, uint16(tc.size), strings.Join(tc.declared, ","))
	}
	f.Fuzz(func(t *testing.T, rest string, size uint16, declared string) {
		var names []string
		for _, k := range strings.Split(declared, ",") {
			if IsToken(k) && !strings.EqualFold(k, "Transfer-Encoding") && !strings.EqualFold(k, "Content-Length") &&
				!strings.EqualFold(k, "Trailer") {
				names = append(names, k) // a name net/http keeps declared
			}
		}
		got, want := ourTrailer(rest, 16+int(size), names), netHTTPTrailer(t, rest, 16+int(size), names)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q, size %d, declared %q:\nReadTrailer %+v\nnet/http    %+v", rest, 16+int(size), names, got, want)
		}
	})
}
