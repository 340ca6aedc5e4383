// Package termsafe keeps text reports from driving a terminal: names and
// values read from a tape (a method, a tool name, a client's name) are
// other people's data, and a control character among them (ESC starting
// a sequence that clears the screen, sets the window title or writes the
// clipboard, the C1 CSI U+009B that some terminals honour alike, or a lone
// byte 0x9B outside valid UTF-8 that a terminal reading 8-bit controls takes
// as CSI) must reach the terminal as a harmless mark, not as a command.
package termsafe

import (
	"io"
	"unicode/utf8"
)

// Mark replaces each control character in the output of a Writer.
const Mark = "·"

// Writer passes text to W with every C0 control character but newline and
// tab, DEL, every C1 control character (U+0080 to U+009F in UTF-8), and
// every byte 0x80 to 0x9F that is not part of a valid UTF-8 sequence (a
// terminal reading 8-bit controls takes a lone 0x9B as CSI) replaced by
// Mark. Text split across writes is handled alike, whatever the split: the
// start of a UTF-8 sequence that ends a Write is held until the next Write
// or Flush tells whether it is whole. Other UTF-8, valid or not, is left as
// it is.
type Writer struct {
	W    io.Writer
	buf  []byte
	pend []byte // the start of a UTF-8 sequence that ended the last Write
}

// NewWriter returns a Writer over w.
func NewWriter(w io.Writer) *Writer { return &Writer{W: w} }

// Write writes p to W, control characters replaced. It reports len(p)
// when every replaced byte was written or held.
func (w *Writer) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	text := p
	if len(w.pend) > 0 {
		text = append(w.pend, p...)
	}
	i := safePrefix(text, false)
	if i == len(text) {
		w.pend = w.pend[:0]
		if _, err := w.W.Write(text); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	var held int
	w.buf, held = appendSafe(append(w.buf[:0], text[:i]...), text[i:], false)
	w.pend = append(w.pend[:0], text[len(text)-held:]...)
	if len(w.buf) > 0 {
		if _, err := w.W.Write(w.buf); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush writes the bytes held from the last Write: the start of a UTF-8
// sequence that nothing completed, each of its bytes 0x80 to 0x9F
// replaced.
func (w *Writer) Flush() error {
	if len(w.pend) == 0 {
		return nil
	}
	w.buf, _ = appendSafe(w.buf[:0], w.pend, true)
	w.pend = w.pend[:0]
	_, err := w.W.Write(w.buf)
	return err
}

// String returns s with its control characters replaced, as Writer does.
func String(s string) string {
	p := []byte(s)
	i := safePrefix(p, true)
	if i == len(p) {
		return s
	}
	out, _ := appendSafe(p[:i:i], p[i:], true)
	return string(out)
}

// safePrefix returns the length of p's prefix of whole characters that
// are not controls; at end, p is the whole text (a sequence cut at its
// end is not held but invalid).
func safePrefix(p []byte, end bool) int {
	for i := 0; i < len(p); {
		c := p[i]
		if c < utf8.RuneSelf {
			if control(c) {
				return i
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && size == 1 && (c <= 0x9F || !end && !utf8.FullRune(p[i:])) {
			return i // a lone C1-range byte, or a sequence to hold
		}
		if r >= 0x80 && r <= 0x9F {
			return i
		}
		i += size
	}
	return len(p)
}

// appendSafe appends p to dst with its control characters replaced. Unless
// at end, the start of a UTF-8 sequence that ends p is not appended: held
// says how many bytes that is.
func appendSafe(dst, p []byte, end bool) (out []byte, held int) {
	for i := 0; i < len(p); {
		c := p[i]
		if c < utf8.RuneSelf {
			if control(c) {
				dst = append(dst, Mark...)
			} else {
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(p[i:])
		switch {
		case r == utf8.RuneError && size == 1 && !end && !utf8.FullRune(p[i:]):
			return dst, len(p) - i
		case r == utf8.RuneError && size == 1 && c <= 0x9F, r >= 0x80 && r <= 0x9F:
			dst = append(dst, Mark...) // a lone C1-range byte, or a C1 character
		default:
			dst = append(dst, p[i:i+size]...)
		}
		i += size
	}
	return dst, 0
}

// control reports an ASCII byte that a terminal may take as a command.
func control(c byte) bool { return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f }
