package transport

import (
	"bufio"
	"net/http"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/benchturns"
)

// leanHeadBench is a typical answer head of an MCP server to a POST (an
// event stream), as readResponse hands it to parseHead.
const leanHeadBench = "HTTP/1.1 200 OK\r\nCache-Control: no-cache, no-transform\r\nConnection: keep-alive\r\n" +
	"Content-Type: text/event-stream\r\nMcp-Session-Id: S1\r\nDate: Sun, 29 Nov 2026 16:31:51 GMT\r\n" +
	"Transfer-Encoding: chunked\r\n\r\n"

// BenchmarkLeanHead: parsing a typical answer head with the lean path's
// parser (ours) and with http.ReadResponse (baseline), taking turns in
// rounds; reported: the time per head of each and ratio, ours over the
// baseline.
func BenchmarkLeanHead(b *testing.B) {
	lines := strings.Count(leanHeadBench, "\n") - 1
	req := &http.Request{Method: http.MethodPost}
	src := strings.NewReader(leanHeadBench)
	br := bufio.NewReaderSize(src, 4<<10)
	benchturns.Run(b, "head", func() bool {
		return parseCommonHead(leanHeadBench, lines, req) != nil
	}, func() bool {
		src.Reset(leanHeadBench)
		br.Reset(src)
		resp, _ := http.ReadResponse(br, req)
		return resp != nil
	})
}
