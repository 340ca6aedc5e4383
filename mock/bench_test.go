package mock

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/replay"
)

// benchCall is the request both servers answer in BenchmarkMockVsServe.
const benchCall = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello"}}}`

// benchTape records an echo call against the reference server.
func benchTape(b *testing.B) []*replay.Session {
	clientVersion = "2025-11-25"
	defer func() { clientVersion = "" }()
	path := recordRef(b, func(ctx context.Context, cs *mcp.ClientSession) {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello"}}); err != nil {
			b.Fatal(err)
		}
	})
	return []*replay.Session{loadSession(b, path)}
}

// lineClient drives a stdio server with raw frames: one request, then its
// answer, at a time.
type lineClient struct {
	w  io.Writer
	r  *bufio.Reader
	id int
}

func (c *lineClient) call(b *testing.B, frame string) {
	c.id++
	if _, err := fmt.Fprintf(c.w, frame+"\n", c.id); err != nil {
		b.Fatal(err)
	}
	for {
		line, err := c.r.ReadBytes('\n')
		if err != nil {
			b.Fatal(err)
		}
		info := jsonrpc.Classify(line)
		if info.Kind == jsonrpc.KindResponse && string(info.ID.Raw) == strconv.Itoa(c.id) {
			return
		}
		if info.Kind == jsonrpc.KindError {
			b.Fatalf("error answer: %s", line)
		}
	}
}

// stdioClient serves over in-process pipes and returns a client that has
// initialized.
func stdioClient(b *testing.B, serve func(ctx context.Context, in io.Reader, out io.Writer) error) *lineClient {
	c2sR, c2sW := io.Pipe()
	s2cR, s2cW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = serve(ctx, c2sR, s2cW); s2cW.Close(); close(done) }()
	b.Cleanup(func() { c2sW.Close(); cancel(); go io.Copy(io.Discard, s2cR); <-done })
	c := &lineClient{w: c2sW, r: bufio.NewReaderSize(s2cR, 64<<10), id: -1}
	c.call(b, `{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	fmt.Fprintln(c.w, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

// httpClient posts raw frames to a Streamable HTTP endpoint.
type httpClient struct {
	url, session string
	id           int
}

func (c *httpClient) call(b *testing.B, frame string) {
	c.id++
	req, _ := http.NewRequest(http.MethodPost, c.url, bytes.NewBufferString(fmt.Sprintf(frame, c.id)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if c.session != "" {
		req.Header.Set(sessionHeader, c.session)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode/100 != 2 || !bytes.Contains(body, []byte(`"result"`)) {
		b.Fatalf("POST: %v %d %s", err, resp.StatusCode, body)
	}
	if s := resp.Header.Get(sessionHeader); s != "" {
		c.session = s
	}
}

func newHTTPClient(b *testing.B, h http.Handler) *httpClient {
	srv := httptest.NewServer(h)
	b.Cleanup(srv.Close)
	c := &httpClient{url: srv.URL + Path}
	c.call(b, `{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	return c
}

// BenchmarkMockVsServe measures the mock at --speed max against the
// reference server behind mcptape serve, answering the same tools/call
// over the same transport: one call on each, alternately, per iteration,
// so that both see the same machine load. It reports each one's requests
// per second and mock/serve, the ratio (the target is 1.5 or more).
func BenchmarkMockVsServe(b *testing.B) {
	sessions := benchTape(b)
	for _, tr := range []string{"stdio", "http"} {
		b.Run(tr, func(b *testing.B) {
			srv, err := refserver.New()
			if err != nil {
				b.Fatal(err)
			}
			m, err := New(sessions, WithMaxSpeed())
			if err != nil {
				b.Fatal(err)
			}
			var mockCall, serveCall func()
			if tr == "stdio" {
				mc := stdioClient(b, m.ServeStdio)
				sc := stdioClient(b, func(ctx context.Context, in io.Reader, out io.Writer) error {
					return refserver.ServeStdio(ctx, srv, in, out)
				})
				mockCall, serveCall = func() { mc.call(b, benchCall) }, func() { sc.call(b, benchCall) }
			} else {
				mc := newHTTPClient(b, m.HTTPHandler(HTTPConfig{}))
				sc := newHTTPClient(b, refserver.HTTPHandler(srv, refserver.HTTPConfig{}))
				mockCall, serveCall = func() { mc.call(b, benchCall) }, func() { sc.call(b, benchCall) }
			}
			var mockT, serveT time.Duration
			b.ResetTimer()
			for range b.N {
				t0 := time.Now()
				mockCall()
				t1 := time.Now()
				serveCall()
				mockT += t1.Sub(t0)
				serveT += time.Since(t1)
			}
			b.ReportMetric(float64(b.N)/mockT.Seconds(), "mock-req/s")
			b.ReportMetric(float64(b.N)/serveT.Seconds(), "serve-req/s")
			b.ReportMetric(float64(serveT)/float64(mockT), "mock/serve")
		})
	}
}

// BenchmarkMockIndexMemory builds the matching index of a session of one
// million messages (500,000 distinct requests and their answers) and
// reports the heap the index takes beyond the session, per recorded
// request.
func BenchmarkMockIndexMemory(b *testing.B) {
	const requests = 500_000
	s := &replay.Session{ID: "big"}
	for i := range requests {
		req := []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":"m%d"}}}`, i, i))
		resp := []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"m%d"}]}}`, i, i))
		key := strconv.Itoa(i)
		s.Steps = append(s.Steps, replay.Step{Frame: req, Kind: jsonrpc.KindRequest, Method: "tools/call", IDKey: key, Time: int64(2 * i), Answers: -1})
		s.Server = append(s.Server, replay.ServerMsg{Frame: resp, Kind: jsonrpc.KindResponse, IDKey: key, Time: int64(2*i + 1), Answer: -1})
	}
	b.ResetTimer()
	for range b.N {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		x, err := NewIndex([]*replay.Session{s}, MatchExact)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/requests, "index-B/request")
		runtime.KeepAlive(x)
	}
}
