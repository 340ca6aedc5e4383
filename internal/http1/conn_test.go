package http1

import (
	"errors"
	"net/http"
	"strings"
	"testing"
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
