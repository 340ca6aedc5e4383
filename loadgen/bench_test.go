package loadgen

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/transport"
)

// benchConc is the concurrency of the generator benchmark.
const benchConc = 16

// BenchmarkGenerator compares the load generator (closed model, benchConc
// sessions) with a bare net/http loop at the same concurrency posting the
// same tools/call body, against the reference server (stateless, JSON
// answers) in the same process. The baseline sub-benchmark reports
// "ours/baseline-time", the ratio of their times per request (run both
// sub-benchmarks together; above 1 is the generator's overhead). See
// scripts/bench-load.sh for the comparison with vegeta and wrk.
func BenchmarkGenerator(b *testing.B) {
	url := benchServer(b)
	calls := mustCallsB(b, `tools/call echo {"message":"hi"}`)
	var per [2]float64
	b.Run("ours", func(b *testing.B) {
		start := time.Now()
		rep, err := Run(context.Background(), Target{URL: url}, calls, WithSessions(benchConc), WithRequests(int64(b.N)))
		if err != nil || rep.Answered != int64(b.N) {
			b.Fatalf("%v %+v", err, rep.Errors)
		}
		per[0] = float64(time.Since(start)) / float64(b.N)
	})
	b.Run("baseline", func(b *testing.B) {
		// net/http's Transport, tuned as the generator's client is
		c, _ := transport.NewHTTPClient(0, transport.WithNetHTTPOnly())
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`)
		var left atomic.Int64
		left.Store(int64(b.N))
		var wg sync.WaitGroup
		start := time.Now()
		for range benchConc {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for left.Add(-1) >= 0 {
					req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					resp, err := c.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
		}
		wg.Wait()
		per[1] = float64(time.Since(start)) / float64(b.N)
		if per[0] > 0 {
			b.ReportMetric(per[0]/per[1], "ours/baseline-time")
		}
	})
}

// benchServer serves the reference server (stateless, JSON answers) on
// loopback until the benchmark ends and returns its URL.
func benchServer(b *testing.B) string {
	s, err := refserver.New()
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: refserver.HTTPHandler(s, refserver.HTTPConfig{Stateless: true, JSONResponse: true})}
	ln, url := listen(b)
	go func() { _ = srv.Serve(ln) }()
	b.Cleanup(func() { srv.Close() })
	return url
}

func mustCallsB(b *testing.B, specs ...string) []Call {
	var out []Call
	for _, s := range specs {
		c, err := ParseCall(s)
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// resultsConc is the concurrency of BenchmarkResults.
const resultsConc = 64

// BenchmarkResults compares the generator's throughput (closed model,
// resultsConc sessions, against the reference server in the same process)
// with and without WithResults writing every request's line to a file.
// The b.N requests are run in rounds alternating without and with, so
// that a machine whose load drifts weighs on both alike; it reports
// "with/without-rate", the ratio of the throughputs (target: at least
// 0.95).
func BenchmarkResults(b *testing.B) {
	url := benchServer(b)
	calls := mustCallsB(b, `tools/call echo {"message":"hi"}`)
	f, err := os.CreateTemp(b.TempDir(), "results-*.ndjson")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	const rounds = 4
	per := max(int64(b.N)/(2*rounds), 1)
	var took [2]time.Duration
	b.ResetTimer()
	for r := 0; r < rounds; r++ {
		for i, extra := range [][]Option{nil, {WithResults(f, ResultsNDJSON)}} {
			opts := append([]Option{WithSessions(resultsConc), WithRequests(per)}, extra...)
			start := time.Now()
			rep, err := Run(context.Background(), Target{URL: url}, calls, opts...)
			if err != nil || rep.Answered != per || len(rep.Warnings) > 0 {
				b.Fatalf("%v %+v %v", err, rep.Errors, rep.Warnings)
			}
			took[i] += time.Since(start)
		}
	}
	b.ReportMetric(float64(took[0])/float64(took[1]), "with/without-rate")
}
