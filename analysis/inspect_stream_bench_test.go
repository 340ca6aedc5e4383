package analysis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime/debug"
	"testing"
	"time"

	"github.com/mcptape/mcptape/tape"
)

// writeAnswersTape writes a tape of answers server messages: tools/call
// requests over 16 sessions each answered by per messages, a plain
// result when per is 1, else a stream (content_start, per-2 deltas,
// content_end with usage). It returns the number of messages.
func writeAnswersTape(tb testing.TB, path string, answers, per int) int64 {
	tb.Helper()
	w, err := tape.Create(path, tape.Header{Version: "bench", Time: testStart.UnixNano(), Transport: "stdio"})
	if err != nil {
		tb.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	t := testStart.UnixNano()
	rec := &tape.Record{Type: tape.TypeMessage}
	var n int64
	write := func(sess int, dir tape.Direction, frame string) {
		t += int64(r.IntN(200_000))
		rec.Time, rec.Session, rec.Dir, rec.Frame = t, sessionNames[sess], dir, []byte(frame)
		if err := w.Write(rec); err != nil {
			tb.Fatal(err)
		}
		n++
	}
	for id, sent := 0, 0; sent < answers; id++ {
		sess := r.IntN(len(sessionNames))
		write(sess, tape.ClientToServer, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"chat","arguments":{"query":"%s"}}}`,
			id, sentence(r, 3+r.IntN(6))))
		if per == 1 {
			write(sess, tape.ServerToClient, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"%s"}]}}`, id, sentence(r, 5+r.IntN(15))))
			sent++
			continue
		}
		write(sess, tape.ServerToClient, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"type":"content_start"}}`, id))
		for range per - 2 {
			write(sess, tape.ServerToClient, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"type":"content_delta","delta":"%s"}}`, id, sentence(r, 5+r.IntN(15))))
		}
		write(sess, tape.ServerToClient, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"type":"content_end","conversation_id":"c%d","usage":{"prompt_tokens":5,"completion_tokens":%d,"total_tokens":%d}}}`,
			id, id, per, per+5))
		sent += per
	}
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return n
}

// BenchmarkInspectStreamed compares inspect's throughput on a tape of
// 1,000,000 streamed parts (a start, 8 deltas and an end per call) with a
// tape of as many plain responses, in one run: streamed/plain is the
// ratio of their messages per second (issue 22 asks at least 0.9).
func BenchmarkInspectStreamed(b *testing.B) {
	const answers = 1_000_000
	dir := b.TempDir()
	streamed, plain := filepath.Join(dir, "streamed.jsonl.zst"), filepath.Join(dir, "plain.jsonl.zst")
	nS, nP := writeAnswersTape(b, streamed, answers, 10), writeAnswersTape(b, plain, answers, 1)
	pass := func(path string, n int64, wantStreams bool) func(b *testing.B) time.Duration {
		return func(b *testing.B) time.Duration {
			cpu := cpuTime()
			defer debug.SetGCPercent(debug.SetGCPercent(RecommendedGCPercent)) // as mcptape inspect runs
			rep, err := Inspect(context.Background(), path)
			if err != nil {
				b.Fatal(err)
			}
			if rep.Tape.Messages != n || (rep.Streams != nil) != wantStreams {
				b.Fatalf("%d messages inspected (want %d), streams %+v", rep.Tape.Messages, n, rep.Streams)
			}
			return cpuTime() - cpu
		}
	}
	paths := []*inspectPath{{name: "streamed", pass: pass(streamed, nS, true)}, {name: "plain", pass: pass(plain, nP, false)}}
	runRounds(b, paths)
	rate := func(name string, n int64) float64 {
		return float64(n) / medianDuration(pathNamed(paths, name).wall).Seconds()
	}
	rs, rp := rate("streamed", nS), rate("plain", nP)
	b.ReportMetric(rs, "streamed-msgs/s")
	b.ReportMetric(rp, "plain-msgs/s")
	b.ReportMetric(rs/rp, "streamed/plain")
}
