// Package termsafe keeps text reports from driving a terminal: names and
// values read from a tape (a method, a tool name, a client's name) are
// other people's data, and a control character among them (ESC starting
// a sequence that clears the screen, sets the window title or writes the
// clipboard, or the C1 CSI U+009B that some terminals honour alike) must
// reach the terminal as a harmless mark, not as a command.
package termsafe

import "io"

// Mark replaces each control character in the output of a Writer.
const Mark = "·"

// c1Lead is the first byte of every C1 control character (U+0080 to
// U+009F) in UTF-8, and also the first byte of Mark (U+00B7 is C2 B7): a
// C1 character is replaced by swapping its second byte for markTail, which
// works even when its lead byte went out in an earlier Write.
const (
	c1Lead   = 0xC2
	markTail = 0xB7
)

// Writer passes text to W with every C0 control character but newline and
// tab, DEL, and every C1 control character (U+0080 to U+009F in UTF-8)
// replaced by Mark. Text split across writes is handled alike, whatever
// the split; other multi-byte UTF-8 is left as it is.
type Writer struct {
	W    io.Writer
	buf  []byte
	prev byte // the last byte written, for a C1 character split across writes
}

// NewWriter returns a Writer over w.
func NewWriter(w io.Writer) *Writer { return &Writer{W: w} }

// Write writes p to W, control characters replaced. It reports len(p)
// when every replaced byte was written.
func (w *Writer) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	prev := w.prev
	w.prev = p[len(p)-1]
	i := safePrefix(prev, p)
	if i == len(p) {
		return w.W.Write(p)
	}
	w.buf = appendSafe(append(w.buf[:0], p[:i]...), prev, p, i)
	if _, err := w.W.Write(w.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// String returns s with its control characters replaced, as Writer does.
func String(s string) string {
	p := []byte(s)
	i := safePrefix(0, p)
	if i == len(p) {
		return s
	}
	return string(appendSafe(p[:i:i], 0, p, i))
}

// safePrefix returns the length of p's prefix without a control
// character; prev is the byte written before p.
func safePrefix(prev byte, p []byte) int {
	for i, c := range p {
		if unsafeByte(prev, c) {
			return i
		}
		prev = c
	}
	return len(p)
}

// appendSafe appends p[from:] to dst with its control characters
// replaced; prev is the byte before p.
func appendSafe(dst []byte, prev byte, p []byte, from int) []byte {
	if from > 0 {
		prev = p[from-1]
	}
	for _, c := range p[from:] {
		switch {
		case isC1(prev, c):
			dst = append(dst, markTail) // the lead byte is already out: C2 B7 is Mark
		case unsafeByte(prev, c):
			dst = append(dst, Mark...)
		default:
			dst = append(dst, c)
		}
		prev = c
	}
	return dst
}

// unsafeByte reports a byte that a terminal may take as a command, or the
// second byte of a C1 control character; prev is the byte before it.
func unsafeByte(prev, c byte) bool {
	return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || isC1(prev, c)
}

// isC1 reports c as the second byte of a C1 control character in UTF-8.
func isC1(prev, c byte) bool { return prev == c1Lead && c >= 0x80 && c <= 0x9f }
