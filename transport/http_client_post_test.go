package transport

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// lateReader is an http.RoundTripper that answers at once and reads the
// request's body only later, as http.RoundTripper allows (net/http's
// Transport may, when a server answers before it read the whole body).
type lateReader struct {
	read chan struct{} // closed: read the body now
	body chan []byte   // what it read
}

func (l *lateReader) RoundTrip(req *http.Request) (*http.Response, error) {
	go func() {
		<-l.read
		b, _ := io.ReadAll(req.Body)
		l.body <- b
	}()
	return &http.Response{
		StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
		Body: io.NopCloser(strings.NewReader(`{"jsonrpc":"2.0","id":1,"result":{}}`)), ContentLength: -1,
		Request: req,
	}, nil
}

// TestSendKeepsNoFrame: once Send returns its caller may reuse the
// frame's memory (a load generator builds every request in one buffer),
// even when the request went to an http.RoundTripper that reads the body
// after the answer came: it reads the frame as it was sent.
func TestSendKeepsNoFrame(t *testing.T) {
	rt := &lateReader{read: make(chan struct{}), body: make(chan []byte, 1)}
	c, err := DialHTTP(context.Background(), "http://127.0.0.1:1/mcp", WithHTTPClient(&http.Client{Transport: rt}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	frame := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	sent := bytes.Clone(frame)
	if _, err := c.Send(context.Background(), frame, SendOptions{}); err != nil {
		t.Fatal(err)
	}
	copy(frame, bytes.Repeat([]byte("x"), len(frame))) // the caller's next request
	close(rt.read)
	if got := <-rt.body; !bytes.Equal(got, sent) {
		t.Errorf("the round tripper read %q, want %q", got, sent)
	}
}
