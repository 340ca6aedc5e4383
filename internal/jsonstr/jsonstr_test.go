package jsonstr

import (
	"strings"
	"testing"
)

// plainRunBytes is PlainRun one byte at a time: the reference its
// word-at-a-time loop must agree with.
func plainRunBytes(b string, i int) int {
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return i
		}
	}
	return i
}

// TestPlainRun puts every byte value at every position of runs of 1 to 24
// bytes (of plain bytes, and of bytes that borrow in the word test: 0x20
// and '#', just above the bounds), starting the scan at 0 and 1, for both
// instantiations, and compares PlainRun with the reference.
func TestPlainRun(t *testing.T) {
	for _, fill := range []byte{'a', ' ', '#', ']', '~'} {
		for n := 1; n <= 24; n++ {
			for pos := range n {
				for c := range 256 {
					b := []byte(strings.Repeat(string([]byte{fill}), n))
					b[pos] = byte(c)
					for _, from := range []int{0, 1} {
						want := plainRunBytes(string(b), from)
						if got := PlainRun(string(b), from); got != want {
							t.Fatalf("PlainRun(%q, %d) = %d, want %d", b, from, got, want)
						}
						if got := PlainRun(b, from); got != want {
							t.Fatalf("PlainRun([]byte(%q), %d) = %d, want %d", b, from, got, want)
						}
					}
				}
			}
		}
	}
}
