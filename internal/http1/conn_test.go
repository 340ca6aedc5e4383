package http1

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"unsafe"
)

// TestInterim: interim responses go to the callback, one by one, each
// head allowed MaxResponseHead bytes (as net/http's Transport allows when
// its trace gets them); skipped, they share the limit with the final
// head (as it does without). A 101 is final.
func TestInterim(t *testing.T) {
	hint := "HTTP/1.1 103 Early Hints\r\nX-Big: " + strings.Repeat("a", MaxResponseHead/3) + "\r\n\r\n"
	raw := strings.Repeat(hint, 4) + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"
	var got []int
	c := memConn([]byte(raw), BufSize)
	resp, err := c.ReadResponse(&http.Request{Method: "POST"}, func(r *http.Response) error {
		got = append(got, r.StatusCode)
		return nil
	})
	if err != nil || resp.StatusCode != 200 || len(got) != 4 {
		t.Fatalf("with a callback: %v, %v, interim %v", resp, err, got)
	}
	c = memConn([]byte(raw), BufSize)
	if _, err := c.ReadResponse(&http.Request{Method: "POST"}, nil); !errors.Is(err, ErrResponseHeadTooLarge) {
		t.Errorf("without a callback: %v, want %v", err, ErrResponseHeadTooLarge)
	}
	stop := errors.New("stop")
	c = memConn([]byte(raw), BufSize)
	if _, err := c.ReadResponse(&http.Request{Method: "POST"}, func(*http.Response) error { return stop }); err != stop {
		t.Errorf("a callback's error: %v", err)
	}
	c = memConn([]byte("HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n"), BufSize)
	resp, err = c.ReadResponse(&http.Request{Method: "GET"}, func(*http.Response) error { return stop })
	if err != nil || resp.StatusCode != 101 {
		t.Errorf("101: %v, %v", resp, err)
	}
}

// TestNoResponse: a connection that ends before any byte of a response
// fails with a NoResponseError; one that ends inside a head does not.
func TestNoResponse(t *testing.T) {
	var nr *NoResponseError
	_, err := memConn(nil, BufSize).ReadResponse(&http.Request{Method: "GET"}, nil)
	if !errors.As(err, &nr) {
		t.Errorf("nothing came: %v", err)
	}
	_, err = memConn([]byte("HTTP/1.1 200 OK\r\n"), BufSize).ReadResponse(&http.Request{Method: "GET"}, nil)
	if err == nil || errors.As(err, &nr) {
		t.Errorf("cut head: %v", err)
	}
}

// TestReuseKeepLast: with Reuse, a response is made in the memory of the
// last one read with Reuse, unless KeepLast gave that one to its caller;
// a response read without Reuse is made in new memory and leaves the
// memory kept for the next one read with it alone. A response whose
// memory is not reused keeps its status and header fields.
func TestReuseKeepLast(t *testing.T) {
	const a = "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nX-A: 1\r\n\r\n"
	const b = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
	read := func(c *Conn, reuse bool) *http.Response {
		t.Helper()
		c.Reuse = reuse
		resp, err := c.ReadResponse(&http.Request{Method: "POST"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		return resp
	}
	tests := []struct {
		name      string
		keep      bool // KeepLast after the first
		plain     bool // the second read without Reuse
		sameFirst bool // the third is made in the first's memory
	}{
		{"reused", false, false, true},
		{"kept", true, false, false},
		{"one read without reuse between", false, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := memConn([]byte(a+b+b), BufSize)
			first := read(c, true)
			if tt.keep {
				c.KeepLast()
			}
			second := read(c, !tt.plain)
			if tt.plain || tt.keep {
				if second == first {
					t.Fatal("second response made in the memory of the first")
				}
				if first.StatusCode != 202 || first.Header.Get("X-A") != "1" || first.Header.Get("Content-Type") != "" {
					t.Errorf("first response changed by the second: %d %v", first.StatusCode, first.Header)
				}
			}
			third := read(c, true)
			if got := third == first; got != tt.sameFirst {
				t.Errorf("third made in the first's memory: %v, want %v", got, tt.sameFirst)
			}
			if third.StatusCode != 200 || third.Header.Get("X-A") != "" || third.Header.Get("Content-Type") != "application/json" {
				t.Errorf("third response: %d %v", third.StatusCode, third.Header)
			}
		})
	}
}

// TestReuseHeadText: with Reuse, a response head of the same bytes as the
// last one is read from the last one's text (no copy); a head of other
// bytes gets its own, and reads as it says.
func TestReuseHeadText(t *testing.T) {
	const a = "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nX-A: 1\r\n\r\n"
	const b = "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nX-A: 2\r\n\r\n"
	c := memConn([]byte(a+a+b), BufSize)
	c.Reuse = true
	var texts []*byte
	for i, want := range []string{"1", "1", "2"} {
		resp, err := c.ReadResponse(&http.Request{Method: "POST"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := resp.Header.Get("X-A"); got != want || resp.StatusCode != 202 {
			t.Fatalf("response %d: %d, X-A %q, want %q", i, resp.StatusCode, got, want)
		}
		texts = append(texts, unsafe.StringData(resp.Header["X-A"][0]))
	}
	if texts[1] != texts[0] {
		t.Error("the same head was read from a new text")
	}
	if texts[2] == texts[1] {
		t.Error("another head was read from the last text")
	}
}
