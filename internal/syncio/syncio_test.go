package syncio

import (
	"bytes"
	"io"
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

func TestLines(t *testing.T) {
	var l Lines
	l.Scan(io.NopCloser(strings.NewReader("data: {\"id\":2,\"x\":\"delta\"}\n\ndata: {\"id\":3}\n")))
	tests := []struct {
		parts []string
		want  bool
	}{
		{[]string{`"id":2`, "delta"}, true},
		{[]string{`"id":3`}, true},
		{[]string{`"id":3`, "delta"}, false}, // on two lines, not one
		{nil, true},
	}
	for _, tt := range tests {
		if got := l.Has(tt.parts...); got != tt.want {
			t.Errorf("Has(%q) = %v, want %v", tt.parts, got, tt.want)
		}
	}
}
