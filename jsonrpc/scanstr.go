package jsonrpc

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf8"

	"github.com/mcptape/mcptape/internal/jsonstr"
)

// This file scans and decodes JSON strings, the bytes most of a frame is
// made of: plain runs go a word or two at a time.

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// str scans the string whose opening quote is at b[i]. It returns the
// position after the closing quote, and whether the string holds an escape.
//
// Plain ASCII goes sixteen bytes at a time (jsonstr.PlainRun) up to a quote, a
// backslash, a control byte or a byte >= 0x80. From the first byte >= 0x80
// on, the rest of the string goes eight bytes at a time up to the first
// three only (mixedRun), and the string is checked for valid UTF-8 at its
// end.
func (s *scanner) str(i int) (int, bool) {
	// Plain ASCII up to the closing quote (most strings) takes this short
	// path.
	j := jsonstr.PlainRun(s.b, i+1)
	if j < len(s.b) && s.b[j] == '"' {
		return j + 1, false
	}
	return s.strFrom(i, j)
}

// strFrom is str for any string, from b[i] on: b[start+1:i] is plain
// ASCII.
func (s *scanner) strFrom(start, i int) (int, bool) {
	b := s.b
	esc, high := false, false
	for {
		if high {
			i = mixedRun(b, i)
		} else {
			i = jsonstr.PlainRun(b, i)
		}
		if i >= len(b) {
			return s.fail(start, errUnterminated), esc
		}
		switch c := b[i]; {
		case c == '"':
			if high && !utf8.Valid(b[start+1:i]) {
				s.badUTF8 = true
			}
			return i + 1, esc
		case c == '\\':
			esc = true
			if i+1 >= len(b) {
				return s.fail(start, errUnterminated), esc
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) {
					return s.fail(i, errShortUnicodeEscape), esc
				}
				for _, h := range b[i+2 : i+6] {
					if unhex(h) < 0 {
						return s.fail(i, errBadUnicodeEscape), esc
					}
				}
				i += 6
			default:
				return s.fail(i, errBadEscape), esc
			}
		case c < 0x20:
			return s.fail(i, errControlChar), esc
		default: // c >= 0x80
			high = true
			i++
		}
	}
}

// mixedRun returns the position of the first quote, backslash or control
// byte at or after b[i], or len(b) when there is none. Its mask is
// jsonstr.PlainRun's (see there), except that the flags of bytes >= 0x80
// are cleared (&^w), which clears no quote, backslash or control byte.
func mixedRun(b []byte, i int) int {
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		if m := (((w ^ (lsb * 0x02)) - lsb*0x21) | ((w ^ (lsb * '\\')) - lsb)) &^ w & msb; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c == '"' || c == '\\' || c < 0x20 {
			return i
		}
	}
	return i
}

// shortStr scans the string whose opening quote is at b[i] when it holds
// at most eight bytes, all ASCII with no control byte and no backslash
// (most keys and many values), and returns the position after its closing quote; ok is
// false otherwise (also when fewer than ten bytes are left), and the
// caller then calls str. It is small enough to be inlined, which saves a
// call per key.
func (s *scanner) shortStr(i int) (end int, ok bool) {
	if i+10 > len(s.b) { // b[i+9] exists: the quote after eight plain bytes
		return 0, false
	}
	w := binary.LittleEndian.Uint64(s.b[i+1 : i+9])
	// The lowest flagged byte is a quote, a control byte, a backslash or
	// a byte >= 0x80 (the masks of jsonstr.PlainRun): plain ASCII before it
	// (b[i+9] when none is).
	n := i + 1 + bits.TrailingZeros64((((w^(lsb*0x02))-lsb*0x21)|((w^(lsb*'\\'))-lsb)|w)&msb)>>3
	if s.b[n] == '"' {
		return n + 1, true
	}
	return 0, false
}

// unhex returns the value of a hex digit, or -1.
func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return int(c - 'A' + 10)
	}
	return -1
}

// appendUnquoted appends the decoded content of a valid JSON string (raw is
// what lies between the quotes) to dst, the way encoding/json decodes it:
// escapes resolved, surrogate pairs joined, lone surrogates and invalid
// UTF-8 bytes replaced by U+FFFD.
func appendUnquoted(dst, raw []byte) []byte {
	for i := 0; i < len(raw); {
		c := raw[i]
		switch {
		case c == '\\' && i+1 < len(raw):
			if raw[i+1] != 'u' {
				e, ok := jsonstr.UnescapeChar(raw[i+1])
				if !ok {
					e = raw[i+1] // not in a valid string
				}
				dst = append(dst, e)
				i += 2
				continue
			}
			r, n, ok := jsonstr.UnicodeEscape(raw, i)
			if !ok {
				dst = append(dst, c)
				i++
				continue
			}
			i += n
			dst = utf8.AppendRune(dst, r)
		case c < utf8.RuneSelf:
			dst = append(dst, c)
			i++
		default:
			r, size := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && size == 1 {
				dst = utf8.AppendRune(dst, utf8.RuneError)
			} else {
				dst = append(dst, raw[i:i+size]...)
			}
			i += size
		}
	}
	return dst
}
