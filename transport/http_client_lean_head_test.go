package transport

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"
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
	funcs := [2]func() bool{func() bool {
		return parseCommonHead(leanHeadBench, lines, req) != nil
	}, func() bool {
		src.Reset(leanHeadBench)
		br.Reset(src)
		resp, _ := http.ReadResponse(br, req)
		return resp != nil
	}}
	var took [2]time.Duration
	const rounds = 10
	per := max(b.N/rounds, 1)
	b.ReportAllocs()
	b.ResetTimer()
	for r := range rounds {
		for k := range funcs {
			k = (k + r) % len(funcs)
			t0 := time.Now()
			for range per {
				if !funcs[k]() {
					b.Fatal("not parsed")
				}
			}
			took[k] += time.Since(t0)
		}
	}
	n := float64(per * rounds)
	b.ReportMetric(float64(took[0].Nanoseconds())/n, "ours-ns/head")
	b.ReportMetric(float64(took[1].Nanoseconds())/n, "baseline-ns/head")
	b.ReportMetric(float64(took[0])/float64(took[1]), "ratio")
}
