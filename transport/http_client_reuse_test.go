package transport

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
)

// reuseAnswers are the answers, in order, of one keep-alive connection
// in TestAnswerHeadsNotShared: heads of every kind, each with a field of
// its own.
var reuseAnswers = []struct {
	raw, ctype, field string
	status, frames    int
}{
	{withLength("200 OK", "Content-Type: application/json\r\nMcp-Session-Id: s-1\r\nX-One: 1",
		`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"}}  `), "application/json", "X-One", 200, 1},
	{withLength("202 Accepted", "X-Two: 2", ""), "", "X-Two", 202, 0},
	{chunked("Content-Type: text/event-stream\r\nX-Three: 3", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\n\n"),
		"text/event-stream", "X-Three", 200, 1},
	{withLength("500 Internal Server Error", "Content-Type: text/plain\r\nX-Four: 4", "boom"), "text/plain", "X-Four", 500, 0},
	{withLength("200 OK", "Content-Type: application/json\r\nX-Five: 5", `{"jsonrpc":"2.0","id":5,"result":{}}`), "application/json", "X-Five", 200, 1},
}

// serveEach serves every connection: each request read, body included,
// is answered with the bytes answer returns for it, until the
// connection ends or answer returns "".
func serveEach(t *testing.T, answer func(req *http.Request, body []byte) string) *rawServer {
	return newRawServer(t, func(nc net.Conn, br *bufio.Reader) {
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			body, _ := io.ReadAll(req.Body)
			a := answer(req, body)
			if a == "" {
				return
			}
			if _, err := io.WriteString(nc, a); err != nil {
				return
			}
		}
	})
}

// withLength returns an answer of status with the header fields head
// (CRLF between them) and body, framed by its Content-Length.
func withLength(status, head, body string) string {
	return "HTTP/1.1 " + status + "\r\n" + head + "\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
}

// chunked returns a 200 answer with the header fields head and body, in
// one chunk.
func chunked(head, body string) string {
	return "HTTP/1.1 200 OK\r\n" + head + "\r\nTransfer-Encoding: chunked\r\n\r\n" + strconv.FormatInt(int64(len(body)), 16) + "\r\n" + body + "\r\n0\r\n\r\n"
}

// TestAnswerHeadsNotShared sends requests one after the other on one
// keep-alive connection whose answers have heads of every kind (JSON, no
// body, event stream, error): each exchange has its own status, content
// type and frames, and, with the answers' heads made in the memory of the
// last one (WithoutAnswerHeaders), no header map; without the option
// each exchange keeps its own header map, untouched by later answers.
// The session id of the first answer is sent with the later requests
// either way.
func TestAnswerHeadsNotShared(t *testing.T) {
	for _, reuse := range []bool{false, true} {
		t.Run(fmt.Sprintf("reuse=%v", reuse), func(t *testing.T) {
			var mu sync.Mutex
			var sessions []string
			srv := serveEach(t, func(req *http.Request, _ []byte) string {
				mu.Lock()
				defer mu.Unlock()
				sessions = append(sessions, req.Header.Get(HeaderSessionID))
				if len(sessions) > len(reuseAnswers) {
					return ""
				}
				return reuseAnswers[len(sessions)-1].raw
			})
			opts := []Option{WithHTTPClient(leanClient(t))}
			if reuse {
				opts = append(opts, WithoutAnswerHeaders())
			}
			c, err := DialHTTP(context.Background(), srv.url, opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			frames := []string{
				`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
				`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
				`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`,
				`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`,
			}
			var exs []*Exchange
			for i, f := range frames {
				ex, err := c.Send(ctx, []byte(f), SendOptions{})
				var se *StatusError
				if err != nil && !(reuseAnswers[i].status == 500 && errors.As(err, &se)) {
					t.Fatalf("request %d: %v", i+1, err)
				}
				<-ex.Done() // the event stream read to its end: the connection is free again
				exs = append(exs, ex)
				for range reuseAnswers[i].frames {
					in, err := c.Recv(ctx)
					if err != nil {
						t.Fatalf("request %d: %v", i+1, err)
					}
					if id := jsonrpc.Classify(in.Frame).ID.Key(); id != strconv.Itoa(i+1) || in.Exchange != ex.ID {
						t.Errorf("request %d: answer %s of exchange %d", i+1, in.Frame, in.Exchange)
					}
				}
			}
			if n := srv.accepted.Load(); n != 1 {
				t.Errorf("%d connections, want 1", n)
			}
			for i, ex := range exs {
				a := reuseAnswers[i]
				if ex.Status != a.status || ex.ContentType != a.ctype || ex.Frames() != a.frames {
					t.Errorf("exchange %d: %d %q %d frames, want %d %q %d", i+1, ex.Status, ex.ContentType, ex.Frames(), a.status, a.ctype, a.frames)
				}
				switch {
				case reuse && ex.Header != nil:
					t.Errorf("exchange %d: header %v, want none", i+1, ex.Header)
				case !reuse:
					for j, b := range reuseAnswers {
						if got, want := ex.Header.Get(b.field) != "", i == j; got != want {
							t.Errorf("exchange %d: %s present %v, want %v (header %v)", i+1, b.field, got, want, ex.Header)
						}
					}
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if want := []string{"", "s-1", "s-1", "s-1", "s-1"}; fmt.Sprint(sessions) != fmt.Sprint(want) {
				t.Errorf("session ids sent %q, want %q", sessions, want)
			}
		})
	}
}

// TestAnswerHeadsReusedConcurrently: connections WithoutAnswerHeaders
// sharing a client whose few keep-alive connections carry the answers of
// all of them, in turn, JSON answers and answers without a body (which
// give their connection back before Send reads their head): every
// answer reaches its request (and for the race detector: no memory of an
// answer's head is used by two at once).
func TestAnswerHeadsReusedConcurrently(t *testing.T) {
	srv := serveEach(t, func(_ *http.Request, body []byte) string {
		if info := jsonrpc.Classify(body); info.Kind == jsonrpc.KindRequest {
			return withLength("200 OK", "Content-Type: application/json", `{"jsonrpc":"2.0","id":`+string(info.ID.Raw)+`,"result":{}}`)
		}
		return withLength("202 Accepted", "X-Kind: none", "")
	})
	client := leanClient(t)
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := DialHTTP(context.Background(), srv.url, WithHTTPClient(client), WithoutAnswerHeaders())
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			ctx := context.Background()
			for i := range 100 {
				id := strconv.Itoa(w*1000 + i)
				frame, status, ctype := `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`, 200, "application/json"
				if i%2 == 1 {
					frame, status, ctype = `{"jsonrpc":"2.0","method":"notifications/progress","params":{}}`, 202, ""
				}
				ex, err := c.Send(ctx, []byte(frame), SendOptions{Deadline: time.Now().Add(time.Minute)})
				if err != nil {
					t.Error(err)
					return
				}
				if ex.Status != status || ex.ContentType != ctype || ex.Header != nil {
					t.Errorf("%s: %d %q %v", frame, ex.Status, ex.ContentType, ex.Header)
					return
				}
				if status == 202 {
					continue
				}
				in, err := c.Recv(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if got := jsonrpc.Classify(in.Frame).ID.Key(); got != id {
					t.Errorf("request %s: answer %s", id, in.Frame)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestSendChecksHeaders: a Send whose headers the lean path would not
// check (see HTTPConn.postHost) is refused, nothing sent, when one of
// them is not a valid field value: the connection's own, the frame's
// protocol version (2026-07-28 _meta), or one of SendOptions. A Host of
// the connection's headers is the request's Host, made ASCII as net/http
// makes it.
func TestSendChecksHeaders(t *testing.T) {
	var mu sync.Mutex
	var hosts []string
	srv := serveEach(t, func(req *http.Request, _ []byte) string {
		mu.Lock()
		defer mu.Unlock()
		hosts = append(hosts, req.Host)
		return withLength("202 Accepted", "X-Kind: none", "")
	})
	ping := []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	tests := []struct {
		name  string
		opts  []Option
		frame string
		send  http.Header
		bad   bool
	}{
		{"valid", nil, "", nil, false},
		{"connection header", []Option{WithHeader(http.Header{"X-Token": {"a\nb"}})}, "", nil, true},
		{"frame's version", nil, `{"jsonrpc":"2.0","method":"notifications/initialized","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28\u0000"}}}`, nil, true},
		{"send header", nil, "", http.Header{"X-Token": {"a\rb"}}, true},
		{"send header name", nil, "", http.Header{"X Token": {"a"}}, true},
		{"host", []Option{WithHeader(http.Header{"Host": {"ex\u00e4mple.test"}})}, "", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mu.Lock()
			hosts = nil
			mu.Unlock()
			c, err := DialHTTP(context.Background(), srv.url, append([]Option{WithHTTPClient(leanClient(t))}, tt.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			frame := ping
			if tt.frame != "" {
				frame = []byte(tt.frame)
			}
			_, err = c.Send(context.Background(), frame, SendOptions{Header: tt.send})
			if tt.bad {
				if err == nil || !strings.Contains(err.Error(), "invalid header field") {
					t.Errorf("Send: %v, want an invalid header field", err)
				}
				mu.Lock()
				defer mu.Unlock()
				if len(hosts) != 0 {
					t.Errorf("%d requests sent", len(hosts))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			mu.Lock()
			defer mu.Unlock()
			want := strings.TrimPrefix(strings.TrimSuffix(srv.url, "/mcp"), "http://")
			if tt.name == "host" {
				want = "xn--exmple-cua.test" // as net/http sends it
			}
			if len(hosts) != 1 || hosts[0] != want {
				t.Errorf("hosts %q, want %q", hosts, want)
			}
		})
	}
}
