package transport

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rawServer is a TCP server that answers each request read on a
// connection with handle's bytes; it counts the connections it accepted.
type rawServer struct {
	ln       net.Listener
	url      string
	accepted atomic.Int32
	wg       sync.WaitGroup
}

// newRawServer serves every connection with serve, which gets the
// connection and a reader on it.
func newRawServer(t *testing.T, serve func(nc net.Conn, br *bufio.Reader)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln, url: "http://" + ln.Addr().String() + "/mcp"}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			s.accepted.Add(1)
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer nc.Close()
				serve(nc, bufio.NewReader(nc))
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

// answerOnce reads one request and writes raw, then closes.
func answerOnce(raw string) func(net.Conn, *bufio.Reader) {
	return func(nc net.Conn, br *bufio.Reader) {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		io.WriteString(nc, raw)
	}
}

// eachRequest reads the requests of a connection one by one, discarding
// their bodies, and calls answer after each until it returns false or no
// request comes.
func eachRequest(br *bufio.Reader, answer func() bool) {
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		if !answer() {
			return
		}
	}
}

// keepAnswering answers every request of a connection with raw.
func keepAnswering(raw string) func(net.Conn, *bufio.Reader) {
	return func(nc net.Conn, br *bufio.Reader) {
		eachRequest(br, func() bool {
			_, err := io.WriteString(nc, raw)
			return err == nil
		})
	}
}

func leanClient(t *testing.T, opts ...ClientOption) *http.Client {
	t.Helper()
	c, err := NewHTTPClient(4, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func post(t *testing.T, ctx context.Context, c *http.Client, u string, body string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return c.Do(req)
}

// TestLeanMatchesNetHTTP sends the same request through the lean path and
// through net/http to servers answering raw bytes, and compares what each
// makes of the answer: status, header, body and errors.
func TestLeanMatchesNetHTTP(t *testing.T) {
	tests := []struct {
		name, raw string
		wantErr   bool // an error from Do or from reading the body
	}{
		{"json", "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}", false},
		{"chunked with trailer", "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\nX-T: 1\r\n\r\n", false},
		{"until close", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil close", false},
		{"http/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nabc", false},
		{"interim 100", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\nx", false},
		{"no content", "HTTP/1.1 204 No Content\r\n\r\n", false},
		{"repeated and lower-case names", "HTTP/1.1 200 OK\r\nset-cookie: a\r\nSet-Cookie: b\r\nmcp-session-id:  s1 \r\nContent-Length: 0\r\n\r\n", false},
		{"no reason phrase", "HTTP/1.1 404\r\nContent-Length: 0\r\n\r\n", false},
		{"error body", "HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{\"error\":\"x\"}", false},
		{"bad content length", "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", true},
		{"conflicting content lengths", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", true},
		{"bad status", "HTTP/1.1 2x0 OK\r\n\r\n", true},
		{"not http", "SSH-2.0-OpenSSH\r\n\r\n", true},
		{"header without colon", "HTTP/1.1 200 OK\r\nNoColon\r\nContent-Length: 0\r\n\r\n", true},
		{"short body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", true},
		{"cut chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", true},
		{"empty answer", "", true},
	}
	type outcome struct {
		status string
		code   int
		header http.Header
		body   string
		length int64
		failed bool
	}
	do := func(c *http.Client, u string) outcome {
		resp, err := post(t, context.Background(), c, u, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
		if err != nil {
			return outcome{failed: true}
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		return outcome{resp.Status, resp.StatusCode, resp.Header, string(body), resp.ContentLength, err != nil}
	}
	lean := leanClient(t)
	std := leanClient(t, WithNetHTTPOnly())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newRawServer(t, answerOnce(tt.raw))
			ours, theirs := do(lean, srv.url), do(std, srv.url)
			if ours.failed != tt.wantErr || theirs.failed != tt.wantErr {
				t.Fatalf("failed: lean %v, net/http %v, want %v", ours.failed, theirs.failed, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			if !reflect.DeepEqual(ours, theirs) {
				t.Errorf("lean path\n%+v\nnet/http\n%+v", ours, theirs)
			}
		})
	}
}

// TestLeanRequestBytes compares the bytes of requests written by the lean
// path with those net/http writes.
func TestLeanRequestBytes(t *testing.T) {
	got := make(chan []byte, 2)
	srv := newRawServer(t, func(nc net.Conn, br *bufio.Reader) {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		var buf bytes.Buffer
		req.Write(&buf) // as received, normalised the same way for both
		got <- buf.Bytes()
		io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
	})
	send := func(c *http.Client, h http.Header) {
		req, _ := http.NewRequest(http.MethodPost, srv.url+"?x=1&y=%20", strings.NewReader(`{"a":1}`))
		req.Header = h
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	h := http.Header{
		"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
		"X-Multi": {"1", "2"}, "Mcp-Session-Id": {"abc"}, "User-Agent": {"probe/1"},
	}
	send(leanClient(t), h)
	send(leanClient(t, WithNetHTTPOnly()), h)
	ours, theirs := <-got, <-got
	if !bytes.Equal(ours, theirs) {
		t.Errorf("lean request\n%q\nnet/http request\n%q", ours, theirs)
	}
}

// TestLeanRawRequest checks the exact bytes the lean path writes.
func TestLeanRawRequest(t *testing.T) {
	got := make(chan string, 1)
	srv := newRawServer(t, func(nc net.Conn, br *bufio.Reader) {
		var head []byte
		for {
			line, err := br.ReadSlice('\n')
			if err != nil {
				return
			}
			head = append(head, line...)
			if string(line) == "\r\n" {
				break
			}
		}
		body := make([]byte, 2)
		io.ReadFull(br, body)
		got <- string(head) + string(body)
		io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
	})
	req, _ := http.NewRequest(http.MethodPost, srv.url, strings.NewReader("{}"))
	req.Header = http.Header{"Z": {"last"}, "Accept": {" a "}, "Content-Length": {"99"}}
	resp, err := leanClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	host := strings.TrimPrefix(strings.TrimSuffix(srv.url, "/mcp"), "http://")
	want := "POST /mcp HTTP/1.1\r\nHost: " + host + "\r\nUser-Agent: Go-http-client/1.1\r\nContent-Length: 2\r\nAccept: a\r\nZ: last\r\n\r\n{}"
	if g := <-got; g != want {
		t.Errorf("request\n%q\nwant\n%q", g, want)
	}
}

func TestLeanBadRequests(t *testing.T) {
	srv := newRawServer(t, keepAnswering("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
	c := leanClient(t)
	tests := []struct {
		name string
		h    http.Header
		want string
	}{
		{"newline in value", http.Header{"X": {"a\r\nInjected: 1"}}, "invalid header field value"},
		{"bad name", http.Header{"Bad Name": {"x"}}, "invalid header field name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, srv.url, strings.NewReader("{}"))
			req.Header = tt.h
			_, err := c.Do(req)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want %q", err, tt.want)
			}
		})
	}
	if n := srv.accepted.Load(); n > 1 {
		t.Errorf("%d connections for requests never sent", n)
	}
}

func TestLeanKeepAliveAndRetry(t *testing.T) {
	ok := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
	t.Run("reuse", func(t *testing.T) {
		srv := newRawServer(t, keepAnswering(ok))
		c := leanClient(t)
		for range 5 {
			resp, err := post(t, context.Background(), c, srv.url, "{}")
			if err != nil {
				t.Fatal(err)
			}
			io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if n := srv.accepted.Load(); n != 1 {
			t.Errorf("%d connections for 5 sequential requests, want 1", n)
		}
	})
	t.Run("connection close not reused", func(t *testing.T) {
		srv := newRawServer(t, keepAnswering("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"))
		c := leanClient(t)
		for range 3 {
			resp, err := post(t, context.Background(), c, srv.url, "{}")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		if n := srv.accepted.Load(); n != 3 {
			t.Errorf("%d connections, want 3", n)
		}
	})
	t.Run("server closed the idle connection", func(t *testing.T) {
		// each connection answers one request, then closes without saying so
		srv := newRawServer(t, answerOnce(ok))
		c := leanClient(t)
		for i := range 3 {
			resp, err := post(t, context.Background(), c, srv.url, "{}")
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			if b, _ := io.ReadAll(resp.Body); string(b) != "{}" {
				t.Fatalf("request %d: body %q", i, b)
			}
			resp.Body.Close()
			time.Sleep(50 * time.Millisecond) // the close has arrived
		}
	})
	t.Run("get sent again after a silent close", func(t *testing.T) {
		// each connection answers one request and closes on the next,
		// unanswered: the close is seen only once the request is sent
		srv := newRawServer(t, func(nc net.Conn, br *bufio.Reader) {
			answerOnce(ok)(nc, br)
			http.ReadRequest(br)
		})
		c := leanClient(t)
		for i := range 3 {
			resp, err := c.Get(srv.url)
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		if n := srv.accepted.Load(); n != 3 {
			t.Errorf("%d connections, want 3", n)
		}
	})
}

func TestLeanCancelStream(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv := newRawServer(t, func(nc net.Conn, br *bufio.Reader) {
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n6\r\ndata:1\r\n")
		<-release
	})
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := post(t, ctx, leanClient(t), srv.url, "{}")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 64)
	n, err := resp.Body.Read(buf)
	if string(buf[:n]) != "data:1" || err != nil {
		t.Fatalf("first read %q, %v", buf[:n], err)
	}
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	_, err = resp.Body.Read(buf)
	if !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second {
		t.Errorf("read after cancel: %v after %v", err, time.Since(start))
	}
}

func TestLeanMaxConnsPerHost(t *testing.T) {
	gate := make(chan struct{})
	srv := newRawServer(t, func(nc net.Conn, br *bufio.Reader) {
		first := true
		eachRequest(br, func() bool {
			io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{")
			if first {
				<-gate // the first body stays incomplete until gate closes
				first = false
			}
			io.WriteString(nc, "}")
			return true
		})
	})
	c := leanClient(t, WithMaxConnsPerHost(1))
	a, err := post(t, context.Background(), c, srv.url, "{}")
	if err != nil {
		t.Fatal(err)
	}
	// a waiter whose context ends gives up without taking the slot
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := post(t, short, c, srv.url, "{}"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting request: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		resp, err := post(t, context.Background(), c, srv.url, "{}")
		if err == nil {
			_, err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("second request done (%v) while the only connection is busy", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(gate)
	if b, err := io.ReadAll(a.Body); err != nil || string(b) != "{}" {
		t.Fatalf("first body %q, %v", b, err)
	}
	a.Body.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := srv.accepted.Load(); n != 1 {
		t.Errorf("%d connections with a bound of 1", n)
	}
}

func TestLeanHostChoice(t *testing.T) {
	c := leanClient(t)
	lt := c.Transport.(*leanTransport)
	proxied, _ := url.Parse("http://proxy.invalid:3128")
	lt.proxy = func(r *http.Request) (*url.URL, error) {
		if r.URL.Hostname() == "via-proxy.example" {
			return proxied, nil
		}
		return nil, nil
	}
	tests := []struct {
		url  string
		mod  func(*http.Request)
		lean bool
	}{
		{"http://127.0.0.1:1/mcp", nil, true},
		{"https://127.0.0.1:1/mcp", nil, false},
		{"http://via-proxy.example/mcp", nil, false},
		{"http://127.0.0.1:1/mcp", func(r *http.Request) { r.Header.Set("Expect", "100-continue") }, false},
		{"http://127.0.0.1:1/mcp", func(r *http.Request) { r.ContentLength = -1 }, false},
		{"http://127.0.0.1:1/mcp", func(r *http.Request) { r.Close = true }, false},
	}
	for _, tt := range tests {
		req, _ := http.NewRequest(http.MethodPost, tt.url, strings.NewReader("{}"))
		if tt.mod != nil {
			tt.mod(req)
		}
		if got := lt.leanHost(req) != nil; got != tt.lean {
			t.Errorf("%s: lean %v, want %v", tt.url, got, tt.lean)
		}
	}
	if h := lt.leanHost(mustReq(t, "http://example.com/mcp")); h == nil || h.addr != "example.com:80" {
		t.Errorf("default port: %+v", h)
	}
}

func mustReq(t *testing.T, u string) *http.Request {
	req, err := http.NewRequest(http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestHTTPConnRedirect checks that a Streamable HTTP endpoint that
// redirects (as /mcp to /mcp/ in some frameworks) is followed, on the
// first request and on later ones.
func TestHTTPConnRedirect(t *testing.T) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/mcp" {
			http.Redirect(w, r, "/mcp/", http.StatusTemporaryRedirect)
			return
		}
		posts.Add(1)
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(bytes.Replace(body, []byte(`"method":"ping"`), []byte(`"result":{}`), 1))
	}))
	defer srv.Close()
	c, err := DialHTTP(context.Background(), srv.URL+"/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := range 2 {
		frame := []byte(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i+1) + `,"method":"ping"}`)
		if _, err := c.Send(context.Background(), frame, SendOptions{}); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
		in, err := c.Recv(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		want := `{"jsonrpc":"2.0","id":` + strconv.Itoa(i+1) + `,"result":{}}`
		if string(in.Frame) != want {
			t.Errorf("frame %s, want %s", in.Frame, want)
		}
	}
	if n := posts.Load(); n != 2 {
		t.Errorf("%d POSTs reached the endpoint, want 2", n)
	}
}
