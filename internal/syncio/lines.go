package syncio

import (
	"bufio"
	"io"
	"strings"
	"sync"
)

// Lines keeps the lines read from streams (event streams a test reads
// while it goes on) for a test to look for. The zero value is ready.
type Lines struct {
	mu    sync.Mutex
	lines []string
}

// Scan reads the lines of r, of up to 1 MiB each, until r ends (or fails),
// and closes it.
func (l *Lines) Scan(r io.ReadCloser) {
	defer r.Close()
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		l.mu.Lock()
		l.lines = append(l.lines, sc.Text())
		l.mu.Unlock()
	}
}

// Has reports whether a line read holds every one of parts.
func (l *Lines) Has(parts ...string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, line := range l.lines {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(line, p)
		}
		if ok {
			return true
		}
	}
	return false
}
