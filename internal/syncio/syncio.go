// Package syncio holds a writer that several goroutines may share: each
// Write reaches the wrapped writer whole, never interleaved with another.
// Used by the recorder (its own lines and the server's stderr) and the
// reference server (the SDK's frames and the streamed chat parts). Buffer
// and Lines let a test read what another goroutine writes or reads.
package syncio

import (
	"io"
	"sync"
)

// Writer serialises the writes to W.
type Writer struct {
	mu sync.Mutex
	W  io.Writer
}

// NewWriter returns a Writer around w.
func NewWriter(w io.Writer) *Writer { return &Writer{W: w} }

// Write writes p to W, one call at a time.
func (l *Writer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.W.Write(p)
}
