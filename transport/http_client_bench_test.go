package transport

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// benchEcho is the tools/call both sides of BenchmarkHTTPConn send.
var benchEcho = []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hello from the benchmark"}}}`)

// benchServer answers every POST with the same JSON tools/call result, as
// a Streamable HTTP server in JSON mode does.
func benchServer(b *testing.B) *httptest.Server {
	answer := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Echo: hello from the benchmark"}]}}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(answer)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkHTTPConn measures tools/call round trips per second over
// HTTPConn (Send, then Recv of the answer; each worker its own
// connection, as load-test sessions are) against a bare net/http
// http.Client POST loop (net/http's Transport, tuned as NewHTTPClient
// tunes it) sending the same body and reading the same answer, at 1 and
// 64 concurrent workers. Both run in alternating
// rounds within one benchmark so that they see the same machine load;
// "ratio" is ours/baseline in requests per second (1.0 = no overhead).
func BenchmarkHTTPConn(b *testing.B) {
	for _, workers := range []int{1, 64} {
		b.Run(fmt.Sprintf("conns=%d", workers), func(b *testing.B) {
			srv := benchServer(b)
			// ours: NewHTTPClient's client (its lean HTTP/1.1 path); the
			// baseline: net/http's Transport with the same tuning.
			client, err := NewHTTPClient(workers)
			if err != nil {
				b.Fatal(err)
			}
			netClient, err := NewHTTPClient(workers, WithNetHTTPOnly())
			if err != nil {
				b.Fatal(err)
			}
			conns := make([]*HTTPConn, workers)
			for i := range conns {
				conns[i], err = DialHTTP(context.Background(), srv.URL, WithHTTPClient(client))
				if err != nil {
					b.Fatal(err)
				}
				defer conns[i].Close()
			}
			ours := func(w, n int) error {
				ctx := context.Background()
				c := conns[w]
				for range n {
					if _, err := c.Send(ctx, benchEcho, SendOptions{}); err != nil {
						return err
					}
					if _, err := c.Recv(ctx); err != nil {
						return err
					}
				}
				return nil
			}
			baseline := func(_, n int) error {
				for range n {
					req, err := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(benchEcho))
					if err != nil {
						return err
					}
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					resp, err := netClient.Do(req)
					if err != nil {
						return err
					}
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil {
						return err
					}
				}
				return nil
			}
			const perRound = 16 // requests per worker per round
			var tOurs, tBase time.Duration
			done := 0
			b.ResetTimer()
			for done < b.N {
				k := min(perRound, (b.N-done+workers-1)/workers)
				tOurs += runWorkers(b, workers, k, ours)
				tBase += runWorkers(b, workers, k, baseline)
				done += k * workers
			}
			b.StopTimer()
			oursAllocs := testing.AllocsPerRun(100, func() { ours(0, 1) })
			baseAllocs := testing.AllocsPerRun(100, func() { baseline(0, 1) })
			oursRate := float64(done) / tOurs.Seconds()
			baseRate := float64(done) / tBase.Seconds()
			b.ReportMetric(oursRate/baseRate, "ratio")
			b.ReportMetric(oursRate, "ours-req/s")
			b.ReportMetric(baseRate, "baseline-req/s")
			b.ReportMetric(oursAllocs, "ours-allocs/req")
			b.ReportMetric(baseAllocs, "baseline-allocs/req")
		})
	}
}

// runWorkers runs f(w, n) in workers goroutines and returns the wall time.
func runWorkers(b *testing.B, workers, n int, f func(w, n int) error) time.Duration {
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	start := time.Now()
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(w, n); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	return took
}
