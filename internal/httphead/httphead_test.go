package httphead

import (
	"bufio"
	"math"
	"net/http"
	"net/textproto"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

func TestCutLine(t *testing.T) {
	for _, tc := range []struct {
		in, line, rest string
		ok             bool
	}{
		{"a\r\nb", "a", "b", true},
		{"\r\n", "", "", true},
		{"a b\r\n\r\n", "a b", "\r\n", true},
		{"a\rb\r\nc", "a\rb", "c", true}, // a CR inside is the caller's to refuse
		{"a\nb\r\n", "", "", false},      // bare LF
		{"\n", "", "", false},
		{"a\r", "", "", false},
		{"", "", "", false},
	} {
		line, rest, ok := CutLine(tc.in)
		if line != tc.line || rest != tc.rest || ok != tc.ok {
			t.Errorf("CutLine(%q) = %q, %q, %v; want %q, %q, %v", tc.in, line, rest, ok, tc.line, tc.rest, tc.ok)
		}
	}
}

func TestSplitRequestLine(t *testing.T) {
	for _, tc := range []struct {
		in, method, target, proto string
		ok                        bool
	}{
		{"GET /mcp HTTP/1.1", "GET", "/mcp", "HTTP/1.1", true},
		{"GET / HTTP/1.1 ", "GET", "/", "HTTP/1.1 ", true}, // as net/http: the rest is the proto
		{"GET  / HTTP/1.1", "GET", "", "/ HTTP/1.1", true},
		{" / HTTP/1.1", "", "/", "HTTP/1.1", true},
		{"GET /", "", "", "", false},
		{"GET", "", "", "", false},
		{"", "", "", "", false},
	} {
		m, tg, p, ok := SplitRequestLine(tc.in)
		if m != tc.method || tg != tc.target || p != tc.proto || ok != tc.ok {
			t.Errorf("SplitRequestLine(%q) = %q, %q, %q, %v; want %q, %q, %q, %v",
				tc.in, m, tg, p, ok, tc.method, tc.target, tc.proto, tc.ok)
		}
	}
}

// TestParseStatusLine checks the table, and that each line taken reads the
// same with http.ReadResponse.
func TestParseStatusLine(t *testing.T) {
	for _, tc := range []struct {
		in          string
		minor, code int
		status      string
		ok          bool
	}{
		{"HTTP/1.1 200 OK", 1, 200, "200 OK", true},
		{"HTTP/1.0 404", 0, 404, "404", true},
		{"HTTP/1.1 100 Continue", 1, 100, "100 Continue", true},
		{"HTTP/1.1 999 ", 1, 999, "999 ", true},
		{"HTTP/1.1 500 Internal  Error \x01", 1, 500, "500 Internal  Error \x01", true}, // the caller judges the reason
		{"HTTP/1.1 099 Odd", 0, 0, "", false},                                           // net/http takes it
		{"HTTP/1.1  200 OK", 0, 0, "", false},                                           // net/http takes it
		{"HTTP/1.1 200OK", 0, 0, "", false},
		{"HTTP/1.1 20 OK", 0, 0, "", false},
		{"HTTP/1.1 2x0 OK", 0, 0, "", false},
		{"HTTP/1.1 +20 OK", 0, 0, "", false},
		{"HTTP/1.1 :00 OK", 0, 0, "", false}, // ':' follows '9'
		{"HTTP/1.1 20: OK", 0, 0, "", false},
		{"HTTP/1.1 /00 OK", 0, 0, "", false}, // '/' precedes '0'
		{"HTTP/1.: 200 OK", 0, 0, "", false},
		{"HTTP/1.2 200 OK", 0, 0, "", false},
		{"HTTP/2.0 200 OK", 0, 0, "", false},
		{"http/1.1 200 OK", 0, 0, "", false},
		{"HTTP/1.1\t200 OK", 0, 0, "", false},
		{"HTTP/1.1 200", 1, 200, "200", true},
		{"HTTP/1.1 ", 0, 0, "", false},
		{"", 0, 0, "", false},
	} {
		minor, code, status, ok := ParseStatusLine(tc.in)
		if minor != tc.minor || code != tc.code || status != tc.status || ok != tc.ok {
			t.Errorf("ParseStatusLine(%q) = %d, %d, %q, %v; want %d, %d, %q, %v",
				tc.in, minor, code, status, ok, tc.minor, tc.code, tc.status, tc.ok)
		}
		if ok {
			checkStatusAsNetHTTP(t, tc.in, minor, code, status)
		}
	}
}

// checkStatusAsNetHTTP fails t unless http.ReadResponse reads line as a
// status line with the given parts.
func checkStatusAsNetHTTP(t *testing.T, line string, minor, code int, status string) {
	t.Helper()
	resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(line+"\r\nContent-Length: 0\r\n\r\n")), nil)
	if err != nil {
		t.Fatalf("%q taken, http.ReadResponse refuses it: %v", line, err)
	}
	if resp.ProtoMajor != 1 || resp.ProtoMinor != minor || resp.StatusCode != code || resp.Status != status ||
		resp.Proto != line[:len("HTTP/1.1")] {
		t.Fatalf("%q: minor %d, code %d, status %q; http.ReadResponse: %d, %d, %q",
			line, minor, code, status, resp.ProtoMinor, resp.StatusCode, resp.Status)
	}
}

func TestSplitHeaderLine(t *testing.T) {
	for _, tc := range []struct {
		in, name, value string
		ok              bool
	}{
		{"Content-Type: application/json", "Content-Type", "application/json", true},
		{"content-type:application/json", "Content-Type", "application/json", true},
		{"X-A:\t a\tb \t", "X-A", "a\tb", true},
		{"X-Empty:", "X-Empty", "", true},
		{"X-Obs: caf\xc3\xa9", "X-Obs", "caf\xc3\xa9", true},
		{"x-a: a:b", "X-A", "a:b", true},
		{"a_b: 1", "A_b", "1", true},
		{"X-Long-Header-Name-Beyond-Thirty-two-bytes: v", "X-Long-Header-Name-Beyond-Thirty-Two-Bytes", "v", true},
		{"Content-Length : 2", "", "", false}, // white space before the colon
		{" X: 1", "", "", false},              // obs-fold
		{"X", "", "", false},
		{": v", "", "", false},
		{"X(A): v", "", "", false},
		{"X-\xc3\xa9: v", "", "", false},
		{"X: a\x00b", "", "", false},
		{"X: a\x7fb", "", "", false},
		{"X: a\rb", "", "", false},
		{"X: a\nb", "", "", false},
		{"", "", "", false},
	} {
		name, value, ok := SplitHeaderLine(tc.in)
		if name != tc.name || value != tc.value || ok != tc.ok {
			t.Errorf("SplitHeaderLine(%q) = %q, %q, %v; want %q, %q, %v", tc.in, name, value, ok, tc.name, tc.value, tc.ok)
		}
		if ok {
			checkFieldAsNetHTTP(t, tc.in, name, value)
		}
	}
}

// checkFieldAsNetHTTP fails t unless net/textproto reads line as the
// field name: value.
func checkFieldAsNetHTTP(t *testing.T, line, name, value string) {
	t.Helper()
	h, err := textproto.NewReader(bufio.NewReader(strings.NewReader(line + "\r\n\r\n"))).ReadMIMEHeader()
	if err != nil {
		t.Fatalf("%q taken, net/textproto refuses it: %v", line, err)
	}
	if want := (textproto.MIMEHeader{name: {value}}); !reflect.DeepEqual(h, want) {
		t.Fatalf("%q: %q: %q; net/textproto: %q", line, name, value, h)
	}
}

// TestCanonicalName: names are canonicalized as net/http does, common
// ones without a new string.
func TestCanonicalName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"content-type", "Content-Type"}, {"CONTENT-TYPE", "Content-Type"}, {"Content-Type", "Content-Type"},
		{"mcp-session-id", "Mcp-Session-Id"}, {"x-a", "X-A"}, {"x--a", "X--A"}, {"a_b", "A_b"}, {"1a", "1a"},
		{"x-a-very-long-header-name-indeed-yes", "X-A-Very-Long-Header-Name-Indeed-Yes"},
	} {
		if got := CanonicalName(tc.in); got != tc.want {
			t.Errorf("CanonicalName(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if got := http.CanonicalHeaderKey(tc.in); got != tc.want {
			t.Errorf("test table: net/http says %q for %q", got, tc.in)
		}
	}
	if n := testing.AllocsPerRun(100, func() { CanonicalName("mcp-session-id") }); n != 0 {
		t.Errorf("CanonicalName of a common name allocates %v times", n)
	}
	for name := range commonNames {
		if http.CanonicalHeaderKey(name) != name {
			t.Errorf("common name %q is not canonical", name)
		}
	}
}

// TestTokenByte: the token bytes are those net/textproto takes in a field
// name, but a space (which it takes inside a name, for old peers: not a
// token byte, so such a head goes to net/http).
func TestTokenByte(t *testing.T) {
	if TokenByte(' ') {
		t.Error("TokenByte(' ') = true")
	}
	for c := range 256 {
		if c == ':' || c == '\r' || c == '\n' || c == ' ' {
			continue // these end a name or a line, or see above
		}
		name := "A" + string([]byte{byte(c)}) + "b"
		_, err := textproto.NewReader(bufio.NewReader(strings.NewReader(name + ": v\r\n\r\n"))).ReadMIMEHeader()
		if got, want := TokenByte(byte(c)), err == nil; got != want {
			t.Errorf("TokenByte(%#x) = %v; net/textproto takes %q: %v", c, got, name, want)
		}
		if got, want := IsToken(name), TokenByte(byte(c)); got != want {
			t.Errorf("IsToken(%q) = %v, want %v", name, got, want)
		}
	}
	if IsToken("") {
		t.Error("IsToken(\"\") = true")
	}
}

func TestTrimOWS(t *testing.T) {
	for in, want := range map[string]string{
		"": "", " ": "", "\t \t": "", "a": "a", " a ": "a", "\ta b\t": "a b", " \r": "\r", "\va\v": "\va\v",
	} {
		if got := TrimOWS(in); got != want {
			t.Errorf("TrimOWS(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEqualFold(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"chunked", "chunked", true}, {"CHUNKED", "chunked", true}, {"ChUnKeD", "cHuNkEd", true},
		{"chunke", "chunked", false}, {"chunked ", "chunked", false}, {"[", "{", false}, {"@", "`", false},
		{"\xc3\xa9", "\xc3\xa9", true}, {"\xc3\x89", "\xc3\xa9", false}, {"K", "\u212a", false}, {"", "", true},
	} {
		if got := EqualFold(tc.a, tc.b); got != tc.want {
			t.Errorf("EqualFold(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestHasToken(t *testing.T) {
	for _, tc := range []struct {
		values []string
		want   bool
	}{
		{nil, false},
		{[]string{"close"}, true},
		{[]string{"x-a, CLOSE "}, true},
		{[]string{"keep-alive", "\tClose\t"}, true},
		{[]string{"a,,close,"}, true},
		{[]string{"closed"}, false},
		{[]string{"clo se"}, false},
		{[]string{"\"close\""}, false},
		{[]string{"keep-alive, upgrade"}, false},
		{[]string{""}, false},
	} {
		if got := HasToken(tc.values, "close"); got != tc.want {
			t.Errorf("HasToken(%q, close) = %v, want %v", tc.values, got, tc.want)
		}
	}
}

// TestCloseAfter checks the table, each case against http.ReadResponse
// of a response with that Connection field.
func TestCloseAfter(t *testing.T) {
	for _, tc := range []struct {
		minor      int
		connection []string
		close      bool
	}{
		{1, nil, false},
		{1, []string{"close"}, true},
		{1, []string{"keep-alive"}, false},
		{1, []string{"x, Close"}, true},
		{1, []string{"upgrade", "close"}, true},
		{0, nil, true},
		{0, []string{"keep-alive"}, false},
		{0, []string{"Keep-Alive, x"}, false},
		{0, []string{"keep-alive, close"}, true},
		{0, []string{"x"}, true},
	} {
		h := http.Header{"X": {"1"}}
		raw := "HTTP/1." + strconv.Itoa(tc.minor) + " 200 OK\r\nX: 1\r\nContent-Length: 0\r\n"
		for _, v := range tc.connection {
			h["Connection"] = append(h["Connection"], v)
			raw += "Connection: " + v + "\r\n"
		}
		got := CloseAfter(h, tc.minor)
		if got != tc.close {
			t.Errorf("HTTP/1.%d, Connection %q: CloseAfter = %v, want %v", tc.minor, tc.connection, got, tc.close)
		}
		want, err := http.ReadResponse(bufio.NewReader(strings.NewReader(raw+"\r\n")), nil)
		if err != nil {
			t.Fatal(err)
		}
		delete(want.Header, "Content-Length")
		if want.Close != got || !reflect.DeepEqual(h, want.Header) {
			t.Errorf("HTTP/1.%d, Connection %q: %v, %v; http.ReadResponse %v, %v",
				tc.minor, tc.connection, got, h, want.Close, want.Header)
		}
	}
}

func TestPragmaCacheControl(t *testing.T) {
	for _, tc := range []struct{ in, want http.Header }{
		{http.Header{}, http.Header{}},
		{http.Header{"Pragma": {"no-cache"}}, http.Header{"Pragma": {"no-cache"}, "Cache-Control": {"no-cache"}}},
		{http.Header{"Pragma": {"no-cache"}, "Cache-Control": {"max-age=0"}},
			http.Header{"Pragma": {"no-cache"}, "Cache-Control": {"max-age=0"}}},
		{http.Header{"Pragma": {"No-Cache"}}, http.Header{"Pragma": {"No-Cache"}}},
		{http.Header{"Pragma": {"x", "no-cache"}}, http.Header{"Pragma": {"x", "no-cache"}}},
	} {
		h := http.Header{}
		for k, v := range tc.in {
			h[k] = v
		}
		if PragmaCacheControl(h); !reflect.DeepEqual(h, tc.want) {
			t.Errorf("PragmaCacheControl(%v) = %v, want %v", tc.in, h, tc.want)
		}
	}
}

func TestAddValue(t *testing.T) {
	h := http.Header{}
	pool := make([]string, 2)
	AddValue(h, "A", "1", &pool)
	AddValue(h, "B", "2", &pool)
	AddValue(h, "A", "3", &pool)
	AddValue(h, "C", "4", &pool) // the pool is used up
	if want := (http.Header{"A": {"1", "3"}, "B": {"2"}, "C": {"4"}}); !reflect.DeepEqual(h, want) {
		t.Fatalf("header %v, want %v", h, want)
	}
	if len(pool) != 0 {
		t.Errorf("%d values left in the pool, want 0", len(pool))
	}
	if cap(h["B"]) != 1 {
		t.Errorf("a pooled value has capacity %d: an append would write over its neighbour", cap(h["B"]))
	}
}

// TestParseDigits checks the table against strconv.ParseUint(s, 10, 63).
func TestParseDigits(t *testing.T) {
	max := strconv.FormatInt(math.MaxInt64, 10)
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"7", 7, true}, {"007", 7, true}, {"1048576", 1 << 20, true},
		{max, math.MaxInt64, true}, {"000000000000000000000" + max, math.MaxInt64, true},
		{"9223372036854775808", 0, false}, {"18446744073709551616", 0, false}, {"99999999999999999999", 0, false},
		{"", 0, false}, {"+1", 0, false}, {"-0", 0, false}, {" 1", 0, false}, {"1 ", 0, false}, {"1_0", 0, false},
		{"0x10", 0, false}, {"1,1", 0, false}, {"\xb1", 0, false},
	} {
		got, ok := ParseDigits(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ParseDigits(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
		n, err := strconv.ParseUint(tc.in, 10, 63)
		if (err == nil) != tc.ok || err == nil && int64(n) != tc.want {
			t.Errorf("test table: strconv.ParseUint(%q, 10, 63) = %d, %v", tc.in, n, err)
		}
	}
}

// TestText: Text gives the last text again for the same bytes, and a new
// string for any other bytes.
func TestText(t *testing.T) {
	last := string([]byte("GET / HTTP/1.1\r\nHost: a\r\n\r\n"))
	tests := []struct {
		name string
		b    string
		same bool
	}{
		{"same bytes", last, true},
		{"one byte differs", strings.Replace(last, "a", "b", 1), false},
		{"longer", last + "x", false},
		{"shorter", last[:len(last)-1], false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Text(last, []byte(tt.b))
			if got != tt.b {
				t.Fatalf("Text = %q, want %q", got, tt.b)
			}
			if same := len(got) > 0 && unsafe.StringData(got) == unsafe.StringData(last); same != tt.same {
				t.Errorf("gave the last text: %v, want %v", same, tt.same)
			}
		})
	}
}
