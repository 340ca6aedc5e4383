// Package termsafe keeps text reports from driving a terminal: names and
// values read from a tape (a method, a tool name, a client's name) are
// other people's data, and a control character among them (ESC starting
// a sequence that clears the screen, sets the window title or writes the
// clipboard) must reach the terminal as a harmless mark, not as a
// command.
package termsafe

import "io"

// Mark replaces each control character in the output of a Writer.
const Mark = "·"

// Writer passes text to W with every C0 control character but newline and
// tab, and DEL, replaced by Mark. It works on single bytes, so text split
// across writes is handled alike; multi-byte UTF-8 is left as it is.
type Writer struct {
	W   io.Writer
	buf []byte
}

// NewWriter returns a Writer over w.
func NewWriter(w io.Writer) *Writer { return &Writer{W: w} }

// Write writes p to W, control characters replaced. It reports len(p)
// when every replaced byte was written.
func (w *Writer) Write(p []byte) (int, error) {
	i := safePrefix(p)
	if i == len(p) {
		return w.W.Write(p)
	}
	w.buf = appendSafe(append(w.buf[:0], p[:i]...), p[i:])
	if _, err := w.W.Write(w.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// String returns s with its control characters replaced, as Writer does.
func String(s string) string {
	i := safePrefix([]byte(s))
	if i == len(s) {
		return s
	}
	return string(appendSafe([]byte(s[:i]), []byte(s[i:])))
}

// safePrefix returns the length of p's prefix without a control character.
func safePrefix(p []byte) int {
	for i, c := range p {
		if unsafeByte(c) {
			return i
		}
	}
	return len(p)
}

// appendSafe appends p to dst with its control characters replaced.
func appendSafe(dst, p []byte) []byte {
	for _, c := range p {
		if unsafeByte(c) {
			dst = append(dst, Mark...)
			continue
		}
		dst = append(dst, c)
	}
	return dst
}

// unsafeByte reports a byte that a terminal may take as a command.
func unsafeByte(c byte) bool {
	return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f
}
