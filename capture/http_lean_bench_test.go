package capture

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// sseUpstream serves every request on a raw connection with the answer the
// reference server gives an echo call: an event stream whose head and
// event leave in one write and whose end follows in another. The
// response names session S1 unless sessionless.
func sseUpstream(b *testing.B, sessionless bool) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	event := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"session says hello\"}]}}\n\n"
	head := "HTTP/1.1 200 OK\r\nCache-Control: no-cache, no-transform\r\nConnection: keep-alive\r\nContent-Type: text/event-stream\r\n" +
		hopSession(sessionless) + "Date: Sun, 29 Nov 2026 16:31:51 GMT\r\nTransfer-Encoding: chunked\r\n\r\n" + fmt.Sprintf("%x\r\n%s\r\n", len(event), event)
	return serveRaw(b, ln, func(c net.Conn, _ *http.Request, _ []byte) string {
		io.WriteString(c, head) // head and event in one write, the end in another
		return "0\r\n\r\n"
	}).url()
}

// BenchmarkHTTPProxyHop: echo-shaped exchanges on a raw keep-alive
// connection, directly to an in-process upstream and through the recording
// proxy (recording into a tape that keeps nothing), taking turns in rounds.
// Everything runs in this process, so the CPU time per exchange of the
// proxied path less the direct one is what the proxy costs, free of the
// reference server's noise: proxy-cpu-µs/exchange. Also reported: wall
// time per exchange of each path and the ratio of the proxied path's CPU
// to the direct one's. "sessionless" sends no Mcp-Session-Id and gets
// none (a stateless server): the proxy notes each request in flight
// (http_side.go).
func BenchmarkHTTPProxyHop(b *testing.B) {
	b.Run("session", func(b *testing.B) { benchHop(b, false) })
	b.Run("sessionless", func(b *testing.B) { benchHop(b, true) })
}

// hopSession is the session header line of the hop benchmark's messages.
func hopSession(sessionless bool) string {
	if sessionless {
		return ""
	}
	return "Mcp-Session-Id: S1\r\n"
}

func benchHop(b *testing.B, sessionless bool) {
	up := sseUpstream(b, sessionless)
	rig := startProxyTape(b, up, discardTape{})
	body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"session 1 says hello"}}}`
	type hop struct {
		c        net.Conn
		br       *bufio.Reader
		req      string
		wall     time.Duration
		cpu      time.Duration
		exchange func() error
	}
	var hops []*hop
	for _, addr := range []string{strings.TrimPrefix(up, "http://"), rig.addr} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		h := &hop{c: c, br: bufio.NewReader(c), req: fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: %s\r\nUser-Agent: Go-http-client/1.1\r\n"+
			"Content-Length: %d\r\nAccept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"+
			"Mcp-Protocol-Version: 2025-06-18\r\n%s\r\n%s", addr, len(body), hopSession(sessionless), body)}
		post := &http.Request{Method: "POST"}
		h.exchange = func() error {
			if _, err := io.WriteString(h.c, h.req); err != nil {
				return err
			}
			resp, err := http.ReadResponse(h.br, post)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			_, err = io.Copy(io.Discard, resp.Body)
			return err
		}
		hops = append(hops, h)
	}
	for _, h := range hops { // warm up
		for range 100 {
			if err := h.exchange(); err != nil {
				b.Fatal(err)
			}
		}
	}
	const rounds = 10
	per := max(b.N/rounds, 1)
	b.ResetTimer()
	for r := range rounds {
		for k := range hops {
			h := hops[(k+r)%len(hops)]
			c0, t0 := selfCPU(), time.Now()
			for range per {
				if err := h.exchange(); err != nil {
					b.Fatal(err)
				}
			}
			h.wall += time.Since(t0)
			h.cpu += selfCPU() - c0
		}
	}
	b.StopTimer()
	n := float64(per * rounds)
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / n / 1e3 }
	direct, proxied := hops[0], hops[1]
	b.ReportMetric(us(direct.wall), "direct-µs/exchange")
	b.ReportMetric(us(proxied.wall), "proxied-µs/exchange")
	b.ReportMetric(us(proxied.cpu-direct.cpu), "proxy-cpu-µs/exchange")
	b.ReportMetric(float64(proxied.cpu)/float64(direct.cpu), "cpu-ratio")
}
