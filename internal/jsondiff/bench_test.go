package jsondiff

import (
	"encoding/json"
	"reflect"
	"testing"
)

// benchFrames are a recorded tools/call answer and the same answer from a
// replay: equal once ids and _meta are ignored, as in most replays.
var benchFrames = [2][]byte{
	[]byte(`{"jsonrpc":"2.0","id":17,"result":{"content":[{"type":"text","text":"Echo: hello world, this is a longer message"},{"type":"resource","resource":{"uri":"test://static/resource/1","mimeType":"text/plain","text":"Resource 1: This is a plaintext resource"}}],"structuredContent":{"sum":42,"items":[1,2,3,4,5,6,7,8],"ok":true,"name":"everything"},"isError":false,"_meta":{"progressToken":"t-17"}}}`),
	[]byte(`{"jsonrpc":"2.0","id":"r-17","result":{"content":[{"type":"text","text":"Echo: hello world, this is a longer message"},{"type":"resource","resource":{"uri":"test://static/resource/1","mimeType":"text/plain","text":"Resource 1: This is a plaintext resource"}}],"structuredContent":{"sum":42.0,"items":[1,2,3,4,5,6,7,8],"ok":true,"name":"everything"},"isError":false,"_meta":{"progressToken":"u-9"}}}`),
}

// BenchmarkCompare measures Compare on two frames against the baseline a
// replayer would otherwise use: decoding both with encoding/json and
// reflect.DeepEqual (which cannot even ignore ids or compare 42 with 42.0).
// "deepequal-only" is DeepEqual on values decoded beforehand. The baseline
// sub-benchmark reports ours/baseline, the time ratio (lower is better).
func BenchmarkCompare(b *testing.B) {
	c, err := New()
	if err != nil {
		b.Fatal(err)
	}
	var ours, base float64
	b.Run("ours", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(benchFrames[0]) + len(benchFrames[1])))
		for b.Loop() {
			if eq, err := c.Equal(benchFrames[0], benchFrames[1]); err != nil || !eq {
				b.Fatal("frames differ", err)
			}
		}
		ours = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	b.Run("baseline", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(benchFrames[0]) + len(benchFrames[1])))
		for b.Loop() {
			var x, y any
			if err := json.Unmarshal(benchFrames[0], &x); err != nil {
				b.Fatal(err)
			}
			if err := json.Unmarshal(benchFrames[1], &y); err != nil {
				b.Fatal(err)
			}
			_ = reflect.DeepEqual(x, y)
		}
		base = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		if ours > 0 {
			b.ReportMetric(ours/base, "ours/baseline")
		}
	})
	b.Run("deepequal-only", func(b *testing.B) {
		var x, y any
		if err := json.Unmarshal(benchFrames[0], &x); err != nil {
			b.Fatal(err)
		}
		if err := json.Unmarshal(benchFrames[1], &y); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			_ = reflect.DeepEqual(x, y)
		}
	})
}
