package capture

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/tape"
	"github.com/mcptape/mcptape/transport"
)

// echoCaller is a benchmark session that makes one echo call (HTTP or
// WebSocket), for runEcho.
type echoCaller interface {
	call(b *testing.B) time.Duration
}

// wsEchoSession is an MCP session over WebSocket that calls echo, one call
// at a time.
type wsEchoSession struct {
	c     *transport.WSConn
	frame []byte
}

// newWSEchoSessions opens n initialized sessions at url.
func newWSEchoSessions(b *testing.B, url string, n int) []*wsEchoSession {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out := make([]*wsEchoSession, n)
	for i := range out {
		c, err := transport.DialWebSocket(ctx, url)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { c.Close() })
		for _, f := range []string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`,
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		} {
			if _, err := c.Send(ctx, []byte(f), transport.SendOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := c.Recv(ctx); err != nil {
			b.Fatal(err)
		}
		out[i] = &wsEchoSession{c: c, frame: fmt.Appendf(nil,
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"message":"session %d says hello"}}}`, i)}
	}
	return out
}

// call makes one echo call and returns its latency.
func (s *wsEchoSession) call(b *testing.B) time.Duration {
	start := time.Now()
	ctx := context.Background()
	if _, err := s.c.Send(ctx, s.frame, transport.SendOptions{}); err != nil {
		b.Fatal(err)
	}
	in, err := s.c.Recv(ctx)
	if err != nil || !strings.Contains(string(in.Frame), `"id":2`) {
		b.Fatalf("echo: %s %v", in.Frame, err)
	}
	return time.Since(start)
}

// wsURLOf turns an http:// URL into the ws:// one.
func wsURLOf(url string) string { return "ws" + strings.TrimPrefix(url, "http") }

// BenchmarkWSProxyThroughput: echo calls per second over WebSocket
// through the recording proxy against the same calls made directly to
// `mcptape serve --ws` (a process of its own), with 1 and 64 connections;
// with one, also the median latency added. The proxy runs in this process
// (WSProxy recording into a tape file) and as users run it ("mcptape
// record", metrics prefixed "process-"); the TCP relay floors (processes
// that move bytes without looking at them: the Go one, "floor-", and,
// where there is a C compiler, the C one of testdata/floor/relay.c,
// "c-floor-") are measured alongside: the targets are process-vs-floor
// (and process-vs-c-floor) at most 0.10 of the direct median at one
// connection, and at least -0.03 of direct throughput at 64.
func BenchmarkWSProxyThroughput(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	addr := "127.0.0.1:" + strconv.Itoa(peertest.FreePort(b))
	srv := peertest.StartHTTP(b, ctx, []string{mcptapeBin(b), "serve", "--ws", addr}, nil, "http://"+addr+"/mcp")
	url := "ws://" + addr + "/mcp"

	w, err := tape.Create(filepath.Join(b.TempDir(), "ws.jsonl.zst"), tape.Header{Transport: "ws", Target: url})
	if err != nil {
		b.Fatal(err)
	}
	p, err := NewWSProxy(url, w)
	if err != nil {
		b.Fatal(err)
	}
	pctx, pcancel := context.WithCancel(context.Background())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Serve(pctx, ln) }()
	b.Cleanup(func() {
		pcancel()
		<-done
		if err := w.Close(); err != nil {
			b.Error(err)
		}
	})
	purl := "ws://" + ln.Addr().String() + "/mcp"
	tp := filepath.Join(b.TempDir(), "process.jsonl.zst")
	xurl, xpid := proxyProcess(b, "http://"+addr+"/mcp", func(laddr, _ string) ([]string, []string) {
		return []string{mcptapeBin(b), "record", "--listen", laddr, "--upstream", url, "-o", tp}, nil
	})
	furl, fpid := relayFloor(b, "http://"+addr+"/mcp")
	curl, cpid := cRelayFloor(b, "http://"+addr+"/mcp")
	for _, n := range []int{1, 64} {
		b.Run(fmt.Sprintf("conns=%d", n), func(b *testing.B) {
			type path struct {
				sessions []*wsEchoSession
				elapsed  time.Duration
				cpu      cpuMeter
				lat      []time.Duration
			}
			paths := []*path{
				{sessions: newWSEchoSessions(b, url, n)},
				{sessions: newWSEchoSessions(b, purl, n)},
				{sessions: newWSEchoSessions(b, wsURLOf(xurl), n), cpu: cpuMeter{proxyPid: xpid}},
				{sessions: newWSEchoSessions(b, wsURLOf(furl), n), cpu: cpuMeter{proxyPid: fpid}},
			}
			var cfloor *path
			if curl != "" {
				cfloor = &path{sessions: newWSEchoSessions(b, wsURLOf(curl), n), cpu: cpuMeter{proxyPid: cpid}}
				paths = append(paths, cfloor)
			}
			for _, p := range paths {
				p.cpu.pid = srv.Pid()
				runEcho(b, p.sessions, 4*n, nil)
			}
			const rounds = 16
			per := max(b.N/rounds, n)
			b.ResetTimer()
			for r := range rounds {
				for k := range paths {
					p := paths[(k+r)%len(paths)]
					lat := &p.lat
					if n != 1 {
						lat = nil
					}
					p.elapsed += p.cpu.measure(func() time.Duration { return runEcho(b, p.sessions, per, lat) })
				}
			}
			b.StopTimer()
			total := float64(per * rounds)
			rate := func(p *path) float64 { return total / p.elapsed.Seconds() }
			direct, ours, proc, floor := paths[0], paths[1], paths[2], paths[3]
			b.ReportMetric(rate(direct), "direct-calls/s")
			b.ReportMetric(rate(ours), "proxied-calls/s")
			b.ReportMetric(rate(ours)/rate(direct), "ratio")
			b.ReportMetric(rate(proc)/rate(direct), "process-ratio")
			b.ReportMetric(rate(floor)/rate(direct), "floor-ratio")
			if cfloor != nil {
				b.ReportMetric(rate(cfloor)/rate(direct), "c-floor-ratio")
			}
			if proc.cpu.proxy > 0 {
				b.ReportMetric(float64(proc.cpu.proxy.Microseconds())/total, "process-proxy-cpu-µs/call")
				b.ReportMetric(float64(floor.cpu.proxy.Microseconds())/total, "floor-cpu-µs/call")
				if cfloor != nil {
					b.ReportMetric(float64(cfloor.cpu.proxy.Microseconds())/total, "c-floor-cpu-µs/call")
				}
			}
			if n != 1 {
				b.ReportMetric((rate(proc)-rate(floor))/rate(direct), "process-vs-floor")
				if cfloor != nil {
					b.ReportMetric((rate(proc)-rate(cfloor))/rate(direct), "process-vs-c-floor")
				}
				return
			}
			md, mp, mx, mf := median(direct.lat), median(ours.lat), median(proc.lat), median(floor.lat)
			b.ReportMetric(float64(md.Microseconds()), "direct-median-µs")
			b.ReportMetric(float64(mx.Microseconds()), "process-median-µs")
			b.ReportMetric(float64(mp)/float64(md)-1, "added-latency")
			b.ReportMetric(float64(mx)/float64(md)-1, "process-added-latency")
			b.ReportMetric(float64(mf)/float64(md)-1, "floor-added-latency")
			b.ReportMetric(float64(mx-mf)/float64(md), "process-vs-floor")
			if cfloor != nil {
				mc := median(cfloor.lat)
				b.ReportMetric(float64(mc)/float64(md)-1, "c-floor-added-latency")
				b.ReportMetric(float64(mx-mc)/float64(md), "process-vs-c-floor")
			}
		})
	}
}
