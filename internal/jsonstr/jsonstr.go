// Package jsonstr writes JSON strings, for the tape writer (record fields,
// frames stored as text) and the HTTP capture's event encoder, and decodes
// their escapes for the tape reader and jsonrpc (unquote.go). Both want
// the same thing: a string that decodes back to exactly the bytes given
// (when they are valid UTF-8), made in one pass that copies runs of plain
// ASCII eight bytes at a time. PlainRun, the scan that finds where such a
// run ends, serves the tape reader's string parser too.
package jsonstr

import "unicode/utf8"

// PlainRun returns the index of the first byte of b at or after i that a
// JSON string cannot hold as it is, or that is not ASCII: a control byte
// (below 0x20), '"', '\\' or a byte >= 0x80; len(b) when there is none. It
// tests eight bytes at a time.
func PlainRun[T ~string | ~[]byte](b T, i int) int {
	const lsb, msb = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(b); i += 8 {
		_ = b[i+7] // one bounds check; the compiler merges the loads
		x := uint64(b[i]) | uint64(b[i+1])<<8 | uint64(b[i+2])<<16 | uint64(b[i+3])<<24 |
			uint64(b[i+4])<<32 | uint64(b[i+5])<<40 | uint64(b[i+6])<<48 | uint64(b[i+7])<<56
		q := x ^ (lsb * '"')
		s := x ^ (lsb * '\\')
		// Each term has the high bit of a byte set when that byte is below
		// 0x20, a quote, a backslash, or >= 0x80 (borrows only cause false
		// alarms above a true one, and the byte loop below sorts it out).
		if ((x-lsb*0x20)&^x|(q-lsb)&^q|(s-lsb)&^s|x)&msb != 0 {
			break
		}
	}
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return i
		}
	}
	return i
}

const hexDigits = "0123456789abcdef"

// AppendString appends s to dst as a JSON string, quotes included. Only
// what JSON requires is escaped: '"', '\\' and the control bytes (\n, \r
// and \t in their short form, the others as \u00XX); every other byte is
// copied, except that each byte of invalid UTF-8 becomes U+FFFD (written
// as its UTF-8 bytes, not escaped). Decoding the result therefore gives
// back s exactly when s is valid UTF-8, and QuotedLen tells its length.
func AppendString[T ~string | ~[]byte](dst []byte, s T) []byte {
	dst = append(dst, '"')
	start := 0
	for i := PlainRun(s, 0); i < len(s); i = PlainRun(s, i) {
		c := s[i]
		if c >= utf8.RuneSelf {
			var buf [utf8.UTFMax]byte
			n := copy(buf[:], s[i:min(len(s), i+utf8.UTFMax)])
			if r, size := utf8.DecodeRune(buf[:n]); r != utf8.RuneError || size > 1 {
				i += size // valid: part of the run
				continue
			}
			dst = append(append(dst, s[start:i]...), "\uFFFD"...)
			i++
			start = i
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// QuotedLen returns the length of what AppendString writes for b, which
// must be valid UTF-8, without the two quotes.
func QuotedLen(b []byte) int {
	n := len(b)
	for _, c := range b {
		switch {
		case c >= 0x20 && c != '"' && c != '\\':
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
			n++ // two-byte escape
		default:
			n += 5 // \u00XX
		}
	}
	return n
}
