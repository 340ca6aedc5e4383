package syncio

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

// TestWriterKeepsWritesWhole: concurrent writes never interleave (bytes.Buffer
// alone would race, which -race reports).
func TestWriterKeepsWritesWhole(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			line := strings.Repeat(string(rune('a'+i)), 100) + "\n"
			for range 50 {
				_, _ = w.Write([]byte(line))
			}
		}()
	}
	wg.Wait()
	for _, l := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		if len(l) != 100 || strings.Count(l, l[:1]) != 100 {
			t.Fatalf("interleaved line %q", l)
		}
	}
}
