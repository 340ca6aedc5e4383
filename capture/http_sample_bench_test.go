package capture

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkSamplingThroughput measures what unrecorded traffic costs:
// "mcptape record" in a process of its own recording every session beside
// the same proxy with --sample 0 (forwarding all, recording none), and the
// client talking to the server directly, in turns within one run. It
// reports each path's calls/s, the sample-0 proxy's throughput relative to
// the recording one's, and each proxy process's CPU per call.
//
//	go test -run '^$' -bench SamplingThroughput -benchtime 3000x ./capture
func BenchmarkSamplingThroughput(b *testing.B) {
	url, pid := refHTTP(b)
	aurl, apid := recordProcess(b, url)
	zurl, zpid := recordProcess(b, url, "--sample", "0")
	for _, n := range []int{1, 64} {
		b.Run(fmt.Sprintf("sessions=%d", n), func(b *testing.B) {
			paths := []*benchPath{
				{name: "direct", sessions: newEchoSessions(b, url, n)},
				{name: "record-all", sessions: newEchoSessions(b, aurl, n), cpu: cpuMeter{proxyPid: apid}},
				{name: "sample-0", sessions: newEchoSessions(b, zurl, n), cpu: cpuMeter{proxyPid: zpid}},
			}
			total := runRounds(b, paths, pid, n, false)
			rate := func(p *benchPath) float64 { return total / p.elapsed.Seconds() }
			direct, all, zero := paths[0], paths[1], paths[2]
			b.ReportMetric(rate(direct), "direct-calls/s")
			b.ReportMetric(rate(all), "record-all-calls/s")
			b.ReportMetric(rate(zero), "sample0-calls/s")
			b.ReportMetric(rate(zero)/rate(all), "sample0-vs-all")
			b.ReportMetric(rate(all)/rate(direct), "record-all-ratio")
			b.ReportMetric(rate(zero)/rate(direct), "sample0-ratio")
			if all.cpu.proxy > 0 {
				us := func(d time.Duration) float64 { return float64(d.Microseconds()) / total }
				b.ReportMetric(us(all.cpu.proxy), "record-all-cpu-µs/call")
				b.ReportMetric(us(zero.cpu.proxy), "sample0-cpu-µs/call")
			}
		})
	}
}
