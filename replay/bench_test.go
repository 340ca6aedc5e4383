package replay

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
	"github.com/mcptape/mcptape/transport"
)

// benchMessages is the size of the benchmark session (client and server
// messages together); MCPTAPE_BENCH_MESSAGES overrides it.
const benchMessages = 100_000

// benchFrames returns the client frames of a session of about n messages:
// initialize, initialized, then echo calls.
func benchFrames(n int) [][]byte {
	frames := [][]byte{
		[]byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`),
		[]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`),
	}
	for i := 1; len(frames)*2-1 < n; i++ {
		frames = append(frames, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":"message %d"}}}`, i, i))
	}
	return frames
}

// lockStep is the baseline, a hand-written client: it sends each frame
// as is and, for a request, waits for its response. With rec it also
// records the exchange, to make the tape the replay is measured on.
func lockStep(ctx context.Context, conn transport.Conn, frames [][]byte, rec *tape.Writer) error {
	for _, f := range frames {
		if rec != nil {
			rec.Write(&tape.Record{Type: tape.TypeMessage, Time: time.Now().UnixNano(), Session: "bench", Dir: tape.ClientToServer, Frame: f})
		}
		if _, err := conn.Send(ctx, f, transport.SendOptions{}); err != nil {
			return err
		}
		if jsonrpc.Classify(f).Kind != jsonrpc.KindRequest {
			continue
		}
		for {
			in, err := conn.Recv(ctx)
			if err != nil {
				return err
			}
			if rec != nil {
				rec.Write(&tape.Record{Type: tape.TypeMessage, Time: in.Time.UnixNano(), Session: "bench", Dir: tape.ServerToClient, Frame: in.Frame})
			}
			if k := jsonrpc.Classify(in.Frame).Kind; k == jsonrpc.KindResponse || k == jsonrpc.KindError {
				break
			}
		}
	}
	return conn.Close()
}

// BenchmarkReplayMaxSpeed replays, at --speed max, a session of about
// 100,000 messages against the reference server over stdio, side by side
// with the hand-written lock-step client sending the same frames with no
// rewriting. ratio is the baseline's time over the replay's: 1 means the
// replay costs nothing, the target is at least 0.8.
func BenchmarkReplayMaxSpeed(b *testing.B) {
	n := benchMessages
	if s := os.Getenv("MCPTAPE_BENCH_MESSAGES"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 4 {
			b.Fatalf("MCPTAPE_BENCH_MESSAGES=%q: want a number of at least 4", s)
		}
		n = v
	}
	ctx := context.Background()
	frames := benchFrames(n)
	dial := stdioDial("")

	// Record the session once with the baseline client.
	var buf bytes.Buffer
	w, err := tape.NewWriter(&buf, tape.Header{Tool: "mcptape", Transport: "stdio"})
	if err != nil {
		b.Fatal(err)
	}
	conn, err := dial(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := lockStep(ctx, conn, frames, w); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	r, err := tape.NewReader(&buf)
	if err != nil {
		b.Fatal(err)
	}
	sessions, _, err := Load(r)
	if err != nil {
		b.Fatal(err)
	}
	msgs := len(sessions[0].Steps) + len(sessions[0].Server)

	var ours, base time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		conn, err := dial(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := lockStep(ctx, conn, frames, nil); err != nil {
			b.Fatal(err)
		}
		base += time.Since(start)

		start = time.Now()
		rep, err := Run(ctx, sessions, dial, WithMaxSpeed())
		if err != nil {
			b.Fatal(err)
		}
		ours += time.Since(start)
		if rep.ExitCode() != 0 {
			var t bytes.Buffer
			rep.WriteText(&t)
			b.Fatalf("replay did not match:\n%.2000s", t.String())
		}
	}
	b.ReportMetric(float64(msgs)*float64(b.N)/ours.Seconds(), "replay-msgs/s")
	b.ReportMetric(float64(msgs)*float64(b.N)/base.Seconds(), "baseline-msgs/s")
	b.ReportMetric(base.Seconds()/ours.Seconds(), "ratio")
}
