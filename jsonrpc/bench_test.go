package jsonrpc

import (
	"encoding/json"
	"testing"
	"time"
)

// genericMessage is the baseline: what a program that does not use this
// package would unmarshal every frame into.
type genericMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// benchFrames are the size classes of the performance target.
func benchFrames() []struct {
	name  string
	frame []byte
} {
	return []struct {
		name  string
		frame []byte
	}{
		{"request-150B", requestFrame()},
		{"response-1KiB", responseFrame(1 << 10)},
		{"result-64KiB", resultFrame(64 << 10)},
	}
}

// baseline unmarshals frame the way the baseline does.
func baseline(tb testing.TB, frame []byte) {
	var m genericMessage
	if err := json.Unmarshal(frame, &m); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkClassify measures Classify ("mcptape") and the encoding/json
// baseline side by side for each size class, in MB/s and allocations.
func BenchmarkClassify(b *testing.B) {
	for _, fc := range benchFrames() {
		b.Run(fc.name+"/mcptape", func(b *testing.B) {
			b.SetBytes(int64(len(fc.frame)))
			b.ReportAllocs()
			for b.Loop() {
				if Classify(fc.frame).Kind == KindInvalid {
					b.Fatal("invalid")
				}
			}
		})
		b.Run(fc.name+"/encoding-json", func(b *testing.B) {
			b.SetBytes(int64(len(fc.frame)))
			b.ReportAllocs()
			for b.Loop() {
				baseline(b, fc.frame)
			}
		})
	}
}

// BenchmarkClassifyRatio runs Classify and the baseline in the same
// benchmark, alternating in rounds so both see the same machine load, and
// reports how many times faster Classify is ("x-faster") plus each side's
// ns/frame and Classify's allocations per frame.
func BenchmarkClassifyRatio(b *testing.B) {
	for _, fc := range benchFrames() {
		b.Run(fc.name, func(b *testing.B) {
			var ours, base time.Duration
			const round = 64
			for n := 0; n < b.N; n += round {
				k := min(round, b.N-n)
				t0 := time.Now()
				for range k {
					Classify(fc.frame)
				}
				t1 := time.Now()
				for range k {
					baseline(b, fc.frame)
				}
				ours += t1.Sub(t0)
				base += time.Since(t1)
			}
			allocs := testing.AllocsPerRun(10, func() { Classify(fc.frame) })
			b.ReportMetric(float64(base)/float64(max(ours, 1)), "x-faster")
			b.ReportMetric(float64(ours.Nanoseconds())/float64(b.N), "mcptape-ns/frame")
			b.ReportMetric(float64(base.Nanoseconds())/float64(b.N), "json-ns/frame")
			b.ReportMetric(allocs, "mcptape-allocs/frame")
		})
	}
}

func BenchmarkSplit(b *testing.B) {
	frame := []byte(`[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"prompts/list"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`)
	dst := make([][]byte, 0, 4)
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		dst, _ = AppendSplit(dst[:0], frame)
	}
}

func BenchmarkRewriteID(b *testing.B) {
	frame := requestFrame()
	buf := make([]byte, 0, 2*len(frame))
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		buf, _ = AppendRewrite(buf[:0], frame, TargetID, []byte(`100017`))
	}
}

// TestClassifyAllocs: at most one allocation per frame for typical frames
// (zero for known methods), whatever the size up to 64 KiB and beyond.
func TestClassifyAllocs(t *testing.T) {
	frames := []struct {
		name  string
		frame []byte
		max   float64
	}{
		{"request", requestFrame(), 0},
		{"notification", []byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":3,"total":10}}`), 0},
		{"cancelled", []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r-1","reason":"x"}}`), 0},
		{"response 1KiB", responseFrame(1 << 10), 0},
		{"error", []byte(`{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Invalid params","data":{"field":"a"}}}`), 0},
		{"result 64KiB", resultFrame(64 << 10), 0},
		{"result 1MiB", resultFrame(1 << 20), 0},
		{"batch", []byte(`[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","id":2,"method":"b"}]`), 0},
		{"unknown method", []byte(`{"jsonrpc":"2.0","id":1,"method":"acme/custom"}`), 1},
		{"escaped known method", []byte(`{"jsonrpc":"2.0","id":1,"meth\u006fd":"tools\/list"}`), 0},
		{"invalid", []byte(`{"jsonrpc":"2.0","id":1,"method":`), 0},
		{"nested 100 deep", []byte(`{"jsonrpc":"2.0","id":1,"result":` + string(nest(100)) + `}`), 1},
	}
	for _, fc := range frames {
		if n := testing.AllocsPerRun(5, func() { Classify(fc.frame) }); n > fc.max {
			t.Errorf("%s: %v allocations per frame, want at most %v", fc.name, n, fc.max)
		}
	}
}

func nest(n int) []byte {
	b := make([]byte, 0, 2*n)
	for range n {
		b = append(b, '[')
	}
	for range n {
		b = append(b, ']')
	}
	return b
}
