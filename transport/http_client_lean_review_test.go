package transport

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Review tests of the lean HTTP/1.1 client: each one failed before the
// fix it names.

// leanOutcome is what a client made of an answer.
type leanOutcome struct {
	Status   string
	Code     int
	Header   http.Header
	Body     string
	Length   int64
	TE       []string
	Close    bool
	Failed   bool // an error from Do or from reading the body
	Over     bool // a body longer than the input: framing went wrong
	Trailers http.Header
}

// readOutcome reads resp (or err) into an outcome, the body up to limit
// bytes.
func readOutcome(resp *http.Response, err error, limit int64) leanOutcome {
	if err != nil {
		return leanOutcome{Failed: true}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	o := leanOutcome{
		Status: resp.Status, Code: resp.StatusCode, Header: resp.Header, Body: string(body),
		Length: resp.ContentLength, TE: resp.TransferEncoding, Close: resp.Close,
		Failed: err != nil, Over: int64(len(body)) > limit, Trailers: resp.Trailer,
	}
	if len(o.Header) == 0 {
		o.Header = nil
	}
	return o
}

// leanReadOutcome reads raw as the answer to a request with method on a
// lean connection, as roundTrip does, in memory.
func leanReadOutcome(method string, raw []byte) leanOutcome {
	c := &leanConn{br: bufio.NewReaderSize(bytes.NewReader(raw), leanBufSize)}
	req := &http.Request{Method: method}
	resp, _, err := c.readResponse(req)
	if err != nil {
		return readOutcome(nil, err, 0)
	}
	resp.Body = http.NoBody
	if r := c.bodyReader(req, resp); r != nil {
		resp.Body = io.NopCloser(r)
	}
	return readOutcome(resp, nil, int64(len(raw)))
}

// stdReadOutcome reads raw as net/http's Transport does: interim 1xx
// answers skipped, 101 final.
func stdReadOutcome(method string, raw []byte) leanOutcome {
	br := bufio.NewReaderSize(bytes.NewReader(raw), leanBufSize)
	req := &http.Request{Method: method}
	for {
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			return readOutcome(nil, err, 0)
		}
		if resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
			continue
		}
		return readOutcome(resp, nil, int64(len(raw)))
	}
}

// leanReviewAnswers are answers whose reading differed from net/http's
// before the review (plus a few that always matched).
var leanReviewAnswers = []struct {
	name, method, raw string
}{
	{"plain", "POST", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"},
	{"content length and chunked", "POST", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n"},
	{"chunked with bad content length", "POST", "HTTP/1.1 200 OK\r\nContent-Length: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n"},
	{"content length -0", "POST", "HTTP/1.1 200 OK\r\nContent-Length: -0\r\n\r\n"},
	{"content length padded", "POST", "HTTP/1.1 200 OK\r\nContent-Length:  2 \r\n\r\nab"},
	{"duplicate equal content lengths", "POST", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nab"},
	{"empty content length", "POST", "HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\nab"},
	{"204 with bad content length", "POST", "HTTP/1.1 204 No Content\r\nContent-Length: x\r\n\r\n"},
	{"head with content length", "HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 42\r\n\r\n"},
	{"head chunked", "HEAD", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"},
	{"connection close header", "POST", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx"},
	{"connection keep-alive 1.0", "POST", "HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 1\r\n\r\nx"},
	{"pragma no-cache", "POST", "HTTP/1.1 200 OK\r\nPragma: no-cache\r\nContent-Length: 0\r\n\r\n"},
	{"http/1.0 chunked", "POST", "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n"},
	{"identity transfer encoding", "POST", "HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\n\r\nab"},
	{"folded header", "POST", "HTTP/1.1 200 OK\r\nX-A: 1\r\n 2\r\nContent-Length: 0\r\n\r\n"},
	{"control byte in value", "POST", "HTTP/1.1 200 OK\r\nX-A: a\x01b\r\nContent-Length: 0\r\n\r\n"},
	{"space before colon", "POST", "HTTP/1.1 200 OK\r\nX-A : 1\r\nContent-Length: 0\r\n\r\n"},
	{"leading blank line", "POST", "\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"},
	{"status 099", "POST", "HTTP/1.1 099 Odd\r\nContent-Length: 0\r\n\r\n"},
	{"http/1.2", "POST", "HTTP/1.2 200 OK\r\nContent-Length: 0\r\n\r\n"},
	{"nine early hints", "POST", strings.Repeat("HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n", 9) + "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"},
	{"chunk extension", "POST", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;name=v\r\nab\r\n0;x\r\n\r\n"},
	{"bad chunk size", "POST", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n0\r\n\r\n"},
	{"huge chunk size", "POST", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffffff\r\nab\r\n0\r\n\r\n"},
	{"chunk without crlf", "POST", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX0\r\n\r\n"},
	{"trailer", "POST", "HTTP/1.1 200 OK\r\nTrailer: X-T\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\nX-T: 1\r\n\r\n"},
	{"malformed trailer", "POST", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\nno colon\r\n\r\n"},
	{"101 switching", "POST", "HTTP/1.1 101 Switching Protocols\r\n\r\nrest"},
	{"until close 1.1", "POST", "HTTP/1.1 200 OK\r\n\r\nrest"},
}

// TestLeanReviewReadsAsNetHTTP reads each answer with the lean reader and
// with net/http's, in memory. Before the review the lean reader kept
// Connection: close and duplicate Content-Length fields, took "-0" and
// bad lengths on 204/HEAD/chunked answers, read chunks of HTTP/1.0
// answers, refused folded lines and early-hints series, took control
// bytes in values, a blank line before the status line, and gave HEAD
// answers no length.
func TestLeanReviewReadsAsNetHTTP(t *testing.T) {
	for _, tt := range leanReviewAnswers {
		t.Run(tt.name, func(t *testing.T) {
			ours, theirs := leanReadOutcome(tt.method, []byte(tt.raw)), stdReadOutcome(tt.method, []byte(tt.raw))
			if !reflect.DeepEqual(ours, theirs) {
				t.Errorf("lean\n%+v\nnet/http\n%+v", ours, theirs)
			}
		})
	}
}

// FuzzLeanVsNetHTTP compares the lean reader with net/http's on any
// bytes.
func FuzzLeanVsNetHTTP(f *testing.F) {
	for _, tt := range leanReviewAnswers {
		f.Add(tt.method == "HEAD", []byte(tt.raw))
	}
	// found by fuzzing: a status under 100 frames a body; a head is
	// handed to net/http byte for byte
	f.Add(false, []byte("HTTP/0.0 000 \nContent-Length:01\n\n"))
	f.Add(false, []byte("HTTP/0.0 000\r\r\n\n"))
	f.Fuzz(func(t *testing.T, head bool, raw []byte) {
		method := "POST"
		if head {
			method = "HEAD"
		}
		ours, theirs := leanReadOutcome(method, raw), stdReadOutcome(method, raw)
		if ours.Over {
			t.Fatalf("lean body longer than the input: %+v", ours)
		}
		if !reflect.DeepEqual(ours, theirs) {
			t.Errorf("lean\n%+v\nnet/http\n%+v", ours, theirs)
		}
	})
}

// TestLeanReviewMatchesNetHTTPOverTheWire runs the same answers through
// both clients over TCP.
func TestLeanReviewMatchesNetHTTPOverTheWire(t *testing.T) {
	lean := leanClient(t)
	std := leanClient(t, WithNetHTTPOnly())
	do := func(c *http.Client, method, u string) leanOutcome {
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader("{}")
		}
		req, err := http.NewRequest(method, u, body)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := c.Do(req.WithContext(ctx))
		o := readOutcome(resp, err, 1<<20)
		if resp != nil {
			o.Header.Del("Date")
		}
		return o
	}
	for _, tt := range leanReviewAnswers {
		t.Run(tt.name, func(t *testing.T) {
			srv := newRawServer(t, answerOnce(tt.raw))
			ours, theirs := do(lean, tt.method, srv.url), do(std, tt.method, srv.url)
			if tt.name == "101 switching" {
				// net/http hands a 101 a raw body only after an Upgrade
				// request; the lean path never sends one
				ours.Body, theirs.Body = "", ""
			}
			if !reflect.DeepEqual(ours, theirs) {
				t.Errorf("lean\n%+v\nnet/http\n%+v", ours, theirs)
			}
		})
	}
}

// TestLeanReviewNoDesync sends two requests on one keep-alive connection
// to servers that send more than the framing of the first answer allows.
// Before the fix the second request got the surplus (stale) bytes as its
// answer: the pool took back connections with bytes in the read buffer,
// and looked at the socket only after 100 ms idle.
func TestLeanReviewNoDesync(t *testing.T) {
	const stale = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstale"
	tests := []struct {
		name, method, first string
		late                bool // the surplus comes 20 ms after the answer
	}{
		{"body longer than content length", "POST", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", false},
		{"body after 204", "POST", "HTTP/1.1 204 No Content\r\n\r\n", false},
		{"body after 304", "GET", "HTTP/1.1 304 Not Modified\r\n\r\n", false},
		{"body after HEAD", "HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", false},
		{"chunked then surplus", "POST", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", false},
		{"unsolicited while idle", "POST", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var answered atomic.Int32 // over all connections
			srv := newRawServer(t, func(nc net.Conn, br *bufio.Reader) {
				eachRequest(br, func() bool {
					switch {
					case answered.Add(1) > 1:
						io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfresh")
					case tt.late:
						io.WriteString(nc, tt.first)
						time.Sleep(20 * time.Millisecond)
						io.WriteString(nc, stale)
					default:
						io.WriteString(nc, tt.first+stale)
					}
					return true
				})
			})
			c := leanClient(t)
			send := func(method string) (string, error) {
				var body io.Reader
				if method == http.MethodPost {
					body = strings.NewReader("{}")
				}
				req, _ := http.NewRequest(method, srv.url, body)
				resp, err := c.Do(req)
				if err != nil {
					return "", err
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				return string(b), err
			}
			if _, err := send(tt.method); err != nil {
				t.Fatal(err)
			}
			if tt.late {
				time.Sleep(50 * time.Millisecond) // the surplus has arrived; less than the old 100 ms probe
			}
			got, err := send(http.MethodGet)
			if got == "stale" {
				t.Fatalf("second request answered with the surplus of the first (err %v)", err)
			}
			if err != nil || got != "fresh" {
				t.Errorf("second request: %q, %v; want fresh on a new connection", got, err)
			}
		})
	}
}

// TestLeanReviewEndlessBlankLines: a server that sends empty lines
// forever. Before the fix the lean reader skipped them without bound (a
// busy read until the context ended); net/http fails at once.
func TestLeanReviewEndlessBlankLines(t *testing.T) {
	srv := newRawServer(t, func(nc net.Conn, br *bufio.Reader) {
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		line := bytes.Repeat([]byte("\r\n"), 2048)
		for {
			if _, err := nc.Write(line); err != nil {
				return
			}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err := post(t, ctx, leanClient(t), srv.url, "{}")
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want a malformed answer at once", err)
	}
}

// TestLeanReviewHeadLimits: net/http takes response heads up to 10 MiB,
// interim 1xx heads included; the lean path took 1 MiB per head and at
// most 8 interim answers, and kept a head's scratch buffer with the
// idle connection.
func TestLeanReviewHeadLimits(t *testing.T) {
	big := func(n int) string {
		return "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", n) + "\r\nContent-Length: 2\r\n\r\n{}"
	}
	tests := []struct {
		name    string
		raw     string
		wantErr bool
	}{
		{"512 KiB head", big(512 << 10), false},
		{"2 MiB head", big(2 << 20), false},
		{"11 MiB head", big(11 << 20), true},
		{"1xx heads over 10 MiB together", strings.Repeat("HTTP/1.1 103 Early Hints\r\nX-Big: "+strings.Repeat("a", 1<<20)+"\r\n\r\n", 11) + big(1), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newRawServer(t, keepAnswering(tt.raw))
			lean, std := leanClient(t), leanClient(t, WithNetHTTPOnly())
			for _, c := range []*http.Client{lean, std} {
				resp, err := post(t, context.Background(), c, srv.url, "{}")
				if err == nil {
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
				}
				if (err != nil) != tt.wantErr {
					t.Errorf("net/http only %v: error %v, want error %v", c == std, err, tt.wantErr)
				}
			}
			lt := lean.Transport.(*leanTransport)
			lt.mu.Lock()
			lt.hosts.Range(func(_, v any) bool {
				for _, c := range v.(*leanHost).idle {
					if cap(c.hdr) > maxKeptHead {
						t.Errorf("idle connection keeps a %d-byte head buffer", cap(c.hdr))
					}
				}
				return true
			})
			lt.mu.Unlock()
			lean.CloseIdleConnections()
			std.CloseIdleConnections()
		})
	}
}

// TestLeanReviewEarlyAnswer: a server that answers before reading a
// large request body and then waits. net/http returns the answer; the
// lean path, writing the whole body before reading, blocked until the
// context ended.
func TestLeanReviewEarlyAnswer(t *testing.T) {
	done := make(chan struct{})
	srv := newRawServer(t, func(nc net.Conn, br *bufio.Reader) {
		for {
			line, err := br.ReadString('\n')
			if err != nil || line == "\r\n" {
				break
			}
		}
		io.WriteString(nc, "HTTP/1.1 413 Request Entity Too Large\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
		<-done // reads nothing more
	})
	t.Cleanup(func() { close(done) }) // before the server's cleanup
	body := strings.Repeat("x", 32<<20)
	for i, c := range []*http.Client{leanClient(t), leanClient(t, WithNetHTTPOnly())} {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		resp, err := post(t, ctx, c, srv.url, body)
		cancel()
		if err != nil {
			t.Errorf("net/http only %v: %v, want the 413", i == 1, err)
			continue
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("status %d", resp.StatusCode)
		}
	}
}

// TestLeanReviewBadRequests: requests net/http refuses before sending a
// byte. Before the fix the lean path wrote control bytes of the URL's
// query or opaque part into the request line (header injection), a Host
// net/http refuses, and a Content-Length with no body to send (the
// server waited for it).
func TestLeanReviewBadRequests(t *testing.T) {
	got := make(chan string, 16)
	srv := newRawServer(t, func(nc net.Conn, br *bufio.Reader) {
		nc.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		b, _ := io.ReadAll(br)
		got <- string(b)
	})
	tests := []struct {
		name string
		mod  func(*http.Request)
	}{
		{"crlf in query", func(r *http.Request) { r.URL.RawQuery = "a=1 HTTP/1.1\r\nX-Injected: 1\r\nX: " }},
		{"crlf in opaque", func(r *http.Request) { r.URL.Opaque = "/mcp HTTP/1.1\r\nX-Injected: 1\r\nX:" }},
		{"length without body", func(r *http.Request) { r.Body, r.ContentLength = nil, 5 }},
	}
	// net/http sends an invalid Host as an empty one (go.dev/issue/61431)
	req, _ := http.NewRequest(http.MethodPost, srv.url, strings.NewReader("{}"))
	req.Host = `a"b`
	if resp, err := leanClient(t).Do(req); err == nil {
		resp.Body.Close()
	}
	if s := <-got; !strings.Contains(s, "Host: \r\n") {
		t.Errorf("invalid Host sent as\n%q", s)
	}
	for _, tt := range tests {
		for _, c := range []*http.Client{leanClient(t), leanClient(t, WithNetHTTPOnly())} {
			req, _ := http.NewRequest(http.MethodPost, srv.url, strings.NewReader("{}"))
			tt.mod(req)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			resp, err := c.Do(req.WithContext(ctx))
			cancel()
			if err == nil {
				resp.Body.Close()
			}
			if err == nil || errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s: error %v, want a refusal", tt.name, err)
			}
		}
	}
	time.Sleep(600 * time.Millisecond)
	for {
		select {
		case s := <-got:
			if s != "" {
				t.Errorf("sent a request net/http refuses:\n%q", s)
			}
		default:
			return
		}
	}
}

// TestLeanReviewHeadMemory: the lean reader sized its header map and
// value slice by the number of lines of a head, so a head of many short
// lines cost many times what net/http's reader allocates for it.
func TestLeanReviewHeadMemory(t *testing.T) {
	raw := []byte("HTTP/1.1 200 OK\r\n" + strings.Repeat("a:\r\n", 1<<18) + "Content-Length: 0\r\n\r\n")
	allocated := func(read func()) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		read()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	ours := allocated(func() { leanReadOutcome("POST", raw) })
	theirs := allocated(func() { stdReadOutcome("POST", raw) })
	t.Logf("lean %d bytes, net/http %d bytes for a %d-byte head", ours, theirs, len(raw))
	if ours > 2*theirs {
		t.Errorf("lean reader allocated %d bytes, net/http %d", ours, theirs)
	}
}

// TestLeanReviewCancelMidBody: a request canceled with its body half
// read leaves no connection in the pool mid-answer: the next request
// gets its own answer on a new connection. (Held before the review.)
func TestLeanReviewCancelMidBody(t *testing.T) {
	var answered atomic.Int32
	srv := newRawServer(t, func(nc net.Conn, br *bufio.Reader) {
		eachRequest(br, func() bool {
			if answered.Add(1) == 1 {
				io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nfirst")
				time.Sleep(100 * time.Millisecond)
				io.WriteString(nc, "-restHTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nstale")
				return true
			}
			io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfresh")
			return true
		})
	})
	c := leanClient(t)
	for _, closeFirst := range []bool{false, true} {
		answered.Store(0)
		ctx, cancel := context.WithCancel(context.Background())
		resp, err := post(t, ctx, c, srv.url, "{}")
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 5)
		if _, err := io.ReadFull(resp.Body, buf); err != nil {
			t.Fatal(err)
		}
		cancel()
		if closeFirst {
			resp.Body.Close()
		} else if _, err := io.ReadAll(resp.Body); !errors.Is(err, context.Canceled) {
			t.Errorf("read after cancel: %v", err)
		}
		time.Sleep(150 * time.Millisecond) // the rest has arrived
		resp, err = post(t, context.Background(), c, srv.url, "{}")
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "fresh" || err != nil {
			t.Errorf("close first %v: next answer %q, %v", closeFirst, b, err)
		}
	}
	c.CloseIdleConnections()
}

// TestLeanReviewNoBroaderRetry: a server that takes a request on a
// reused connection and closes without answering. A POST (sent in full)
// is not sent again, a GET is, as with net/http. (Held before the
// review.)
func TestLeanReviewNoBroaderRetry(t *testing.T) {
	for _, method := range []string{http.MethodPost, http.MethodGet} {
		for i, c := range []*http.Client{leanClient(t), leanClient(t, WithNetHTTPOnly())} {
			var got atomic.Int32
			srv := newRawServer(t, func(nc net.Conn, br *bufio.Reader) {
				eachRequest(br, func() bool {
					if got.Add(1) == 2 {
						return false // the second request overall: closed unanswered
					}
					io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
					return true
				})
			})
			send := func() error {
				req, _ := http.NewRequest(method, srv.url, strings.NewReader("{}"))
				resp, err := c.Do(req)
				if err != nil {
					return err
				}
				defer resp.Body.Close()
				_, err = io.ReadAll(resp.Body)
				return err
			}
			if err := send(); err != nil {
				t.Fatal(err)
			}
			err := send()
			want := int32(2)
			if method == http.MethodGet {
				want = 3
			}
			if n := got.Load(); n != want || (err == nil) != (method == http.MethodGet) {
				t.Errorf("%s, net/http only %v: server got %d requests (want %d), error %v", method, i == 1, n, want, err)
			}
			c.CloseIdleConnections()
		}
	}
}
