package replay

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
	"github.com/mcptape/mcptape/transport"
)

// openStreamed opens the tape at path with every session streamed.
func openStreamed(t *testing.T, path string) []*Session {
	t.Helper()
	tp, err := Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range tp.Sessions {
		if !s.Streamed() || s.Steps != nil || s.Server != nil {
			t.Fatalf("session %s: streamed %v, %d steps and %d server messages in memory", s.ID, s.Streamed(), len(s.Steps), len(s.Server))
		}
	}
	return tp.Sessions
}

// TestReplayStreamed replays rich sessions streamed from their tape, over
// both transports: the verdicts are those of sessions held in memory.
func TestReplayStreamed(t *testing.T) {
	stdioTape := recordStdio(t, "2025-11-25", elicitOpts, richScenario(t))
	tests := []struct {
		name string
		dial func(t *testing.T) DialFunc
	}{
		{"over-stdio", func(*testing.T) DialFunc { return stdioDial("") }},
		{"over-http", func(t *testing.T) DialFunc { return httpDial(refHTTP(t, refserver.HTTPConfig{})) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sessions := openStreamed(t, stdioTape)
			inMemory := loadTape(t, stdioTape)
			if len(sessions) != 1 || sessions[0].StepCount() != len(inMemory[0].Steps) {
				t.Fatalf("%d sessions, %d steps; want 1, %d", len(sessions), sessions[0].StepCount(), len(inMemory[0].Steps))
			}
			rep, err := Run(context.Background(), sessions, tc.dial(t), WithSpeed(10), WithTimeout(10*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if sr := rep.Sessions[0]; rep.ExitCode() != 0 || sr.Matched != 8 || sr.ServerRequests != 2 || sr.Sent != sr.Steps {
				t.Fatalf("exit %d, matched %d, server requests %d, sent %d of %d; want 0, 8, 2, all", rep.ExitCode(), sr.Matched, sr.ServerRequests, sr.Sent, sr.Steps)
			}
		})
	}
}

// echoTape writes a stdio tape of initialize and n echo calls, each
// answered, like a long recorded session (gen-tape.py of the repro scripts).
func echoTape(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "long.jsonl.zst")
	w, err := tape.Create(path, tape.Header{Tool: "mcptape", Transport: "stdio"})
	if err != nil {
		t.Fatal(err)
	}
	at := int64(1e18)
	write := func(dir tape.Direction, frame string) {
		at += 1000
		if err := w.Write(&tape.Record{Type: tape.TypeMessage, Time: at, Session: "1", Dir: dir, Frame: []byte(frame)}); err != nil {
			t.Fatal(err)
		}
	}
	write(tape.ClientToServer, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"g","version":"1"}}}`)
	write(tape.ServerToClient, initAnswer("0"))
	write(tape.ClientToServer, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i := 1; i <= n; i++ {
		write(tape.ClientToServer, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi %d"}}}`, i, i))
		write(tape.ServerToClient, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"hi %d"}],"structuredContent":{"message":"hi %d"}}}`, i, i, i))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// echoServer answers like the recording of echoTape.
var echoServer = mcpServer(func(frame []byte, _ *jsonrpc.Info, id string) []string {
	msg := stringAt(frame, "params", "arguments", "message")
	return []string{`{"jsonrpc":"2.0","id":` + id + `,"result":{"content":[{"type":"text","text":"` + msg + `"}],"structuredContent":{"message":"` + msg + `"}}}`}
})

// peakHeap runs f and returns the largest heap in use seen while it ran
// (sampled every few milliseconds), above the heap in use before.
func peakHeap(f func()) uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	f()
	close(stop)
	wg.Wait()
	return peak - min(peak, base)
}

// TestReplayStreamedMemory: replaying a long session streamed from its
// tape keeps only what is in flight: its peak heap does not grow with the
// tape, and stays a fraction of what the same replay takes with the
// session held in memory.
func TestReplayStreamedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("replays 80,000 calls")
	}
	dial := func(context.Context, *Session) (transport.Conn, error) {
		c := newFakeConn(echoServer)
		c.forget = true
		return c, nil
	}
	replayWith := func(calls int, open func() []*Session) (peak uint64) {
		var rep *Report
		peak = peakHeap(func() {
			var err error
			rep, err = Run(context.Background(), open(), dial, WithMaxSpeed(), WithTimeout(10*time.Second))
			if err != nil {
				t.Fatal(err)
			}
		})
		if sr := rep.Sessions[0]; rep.ExitCode() != 0 || sr.Matched != calls+1 {
			t.Fatalf("exit %d, matched %d; want 0, %d: %s", rep.ExitCode(), sr.Matched, calls+1, sr.Error)
		}
		return peak
	}
	short, long := echoTape(t, 20_000), echoTape(t, 60_000)
	streamedShort := replayWith(20_000, func() []*Session { return openStreamed(t, short) })
	streamedLong := replayWith(60_000, func() []*Session { return openStreamed(t, long) })
	inMemory := replayWith(60_000, func() []*Session { return loadTape(t, long) })
	mib := func(n uint64) float64 { return float64(n) / (1 << 20) }
	t.Logf("peak heap: streamed %.1f MiB (20,000 calls), %.1f MiB (60,000); held in memory %.1f MiB", mib(streamedShort), mib(streamedLong), mib(inMemory))
	if streamedLong > streamedShort+8<<20 || streamedLong*3 > inMemory {
		t.Fatalf("streamed replays peaked at %.1f and %.1f MiB of heap (20,000 and 60,000 calls), in memory %.1f MiB: want no growth with the tape and under a third",
			mib(streamedShort), mib(streamedLong), mib(inMemory))
	}
}
