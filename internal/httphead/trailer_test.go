package httphead

import (
	"bufio"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// trailerOutcome is what reading a trailer section made of a response.
type trailerOutcome struct {
	Trailer http.Header
	Err     string
	Left    string // the bytes left unread
}

// ourTrailer reads the trailer section at the start of rest with
// ReadTrailer, from a reader of size bytes, into a response whose Trailer
// field declares the names of declared (if any).
func ourTrailer(rest string, size int, declared []string) trailerOutcome {
	br := bufio.NewReaderSize(strings.NewReader(rest), size)
	resp := &http.Response{}
	for _, k := range declared {
		if resp.Trailer == nil {
			resp.Trailer = http.Header{}
		}
		resp.Trailer[http.CanonicalHeaderKey(k)] = nil
	}
	return outcome(resp, ReadTrailer(br, resp), br)
}

// netHTTPTrailer reads the same section as net/http does after the last
// chunk of a response body.
func netHTTPTrailer(t *testing.T, rest string, size int, declared []string) trailerOutcome {
	t.Helper()
	head := "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"
	for _, k := range declared {
		head += "Trailer: " + k + "\r\n"
	}
	br := bufio.NewReaderSize(strings.NewReader(head+"\r\n0\r\n"+rest), size)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("test head: %v", err)
	}
	_, err = io.ReadAll(resp.Body)
	return outcome(resp, err, br)
}

func outcome(resp *http.Response, err error, br *bufio.Reader) trailerOutcome {
	o := trailerOutcome{Trailer: resp.Trailer}
	if err != nil {
		o.Err = err.Error()
	}
	left, _ := io.ReadAll(br)
	o.Left = string(left)
	return o
}

// trailerCases are trailer sections (what follows "0\r\n") with the size
// of the reader and the names the response declares.
var trailerCases = []struct {
	name, rest string
	size       int
	declared   []string
}{
	{"none", "\r\nHTTP/1.1 200 OK\r\n", 4096, nil},
	{"none, at the end", "\r\n", 16, nil},
	{"one field", "X-T: 1\r\n\r\nnext", 4096, nil},
	{"repeated field", "X-T: 1\r\nx-t: 2\r\nY: 3\r\n\r\n", 4096, nil},
	{"declared field", "X-T: 1\r\n\r\n", 4096, []string{"X-T", "X-U"}},
	{"cut in the blank line", "\r", 4096, nil},
	{"empty", "", 4096, nil},
	{"cut in a field", "X-T: 1\r\n", 4096, nil},
	{"cut after a field line", "X-T: 1\r\n\r", 4096, nil},
	{"too long for the buffer", "X-T: " + strings.Repeat("a", 40) + "\r\n\r\n", 16, nil},
	{"just fits the buffer", "X-T: " + strings.Repeat("a", 7) + "\r\n\r\n", 16, nil},
	{"malformed field", "no colon\r\n\r\n", 4096, nil},
	{"bare LF blank line", "X-T: 1\n\n", 4096, nil},
	{"obs-fold", "X-T: 1\r\n 2\r\n\r\n", 4096, nil},
}

// TestReadTrailer: ReadTrailer reads each section as net/http does: the
// same trailer, error and bytes left.
func TestReadTrailer(t *testing.T) {
	for _, tc := range trailerCases {
		t.Run(tc.name, func(t *testing.T) {
			got, want := ourTrailer(tc.rest, tc.size, tc.declared), netHTTPTrailer(t, tc.rest, tc.size, tc.declared)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("ReadTrailer %+v\nnet/http    %+v", got, want)
			}
		})
	}
	if got := ourTrailer("X-T: 1\r\n\r\n", 4096, nil); !reflect.DeepEqual(got.Trailer, http.Header{"X-T": {"1"}}) {
		t.Errorf("trailer %v, want X-T: 1", got.Trailer) // not only as net/http: as meant
	}
}
