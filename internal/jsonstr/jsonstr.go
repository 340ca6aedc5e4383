// Package jsonstr writes JSON strings, for the tape writer (record fields,
// frames stored as text) and the HTTP capture's event encoder, and decodes
// their escapes for the tape reader and jsonrpc (unquote.go). Both want
// the same thing: a string that decodes back to exactly the bytes given
// (when they are valid UTF-8), made in one pass that copies runs of plain
// ASCII sixteen bytes at a time. PlainRun, the scan that finds where such a
// run ends, serves the tape reader's string parser too.
package jsonstr

import (
	"math/bits"
	"unicode/utf8"
)

// PlainRun returns the index of the first byte of b at or after i that a
// JSON string cannot hold as it is, or that is not ASCII: a control byte
// (below 0x20), '"', '\\' or a byte >= 0x80; len(b) when there is none. It
// tests sixteen bytes at a time.
//
// The mask of a little-endian word w (first byte lowest) flags those
// bytes in the top bit of their byte: c is a quote or a control byte
// exactly when c^2 < 0x21 (the quote 0x22 becomes 0x20, bytes below 0x20
// stay below it), a backslash when c^0x5C < 1, so subtracting flags them,
// and only them among the bytes below 0x80; OR-ing w flags the bytes >=
// 0x80. Borrows only produce false flags above a true one, so the lowest
// flag is always a true hit.
func PlainRun[T ~string | ~[]byte](b T, i int) int {
	i = max(i, 0) // with the loop bounds, this frees the loads of bounds checks
	// The constants, read from a variable, stay in registers through the
	// loop instead of being loaded again for each word.
	k := &runMasks
	quote, ctl, bsl, one, top := k[0], k[1], k[2], k[3], k[4]
	for ; i <= len(b)-16; i += 16 {
		w1, w2 := load64(b, i), load64(b, i+8)
		m1 := (((w1 ^ quote) - ctl) | ((w1 ^ bsl) - one) | w1) & top
		m2 := (((w2 ^ quote) - ctl) | ((w2 ^ bsl) - one) | w2) & top
		if m1|m2 != 0 {
			if m1 != 0 {
				return i + bits.TrailingZeros64(m1)>>3
			}
			return i + 8 + bits.TrailingZeros64(m2)>>3
		}
	}
	for ; i <= len(b)-8; i += 8 {
		w := load64(b, i)
		if m := (((w ^ quote) - ctl) | ((w ^ bsl) - one) | w) & top; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	if i < len(b) && len(b) >= 8 {
		// The last 1 to 7 bytes: the word that ends b, shifted down past
		// the bytes before i. The zero bytes shifted in at the top are
		// flagged (control bytes), so m is never 0; a flag there means
		// none of b is.
		w := load64(b, len(b)-8) >> (uint(i-(len(b)-8)) * 8)
		m := (((w ^ quote) - ctl) | ((w ^ bsl) - one) | w) & top
		return min(i+bits.TrailingZeros64(m)>>3, len(b))
	}
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return i
		}
	}
	return i
}

// load64 returns the eight bytes of b at i as a little-endian word (the
// compiler merges the loads into one).
func load64[T ~string | ~[]byte](b T, i int) uint64 {
	return uint64(b[i]) | uint64(b[i+1])<<8 | uint64(b[i+2])<<16 | uint64(b[i+3])<<24 |
		uint64(b[i+4])<<32 | uint64(b[i+5])<<40 | uint64(b[i+6])<<48 | uint64(b[i+7])<<56
}

// runMasks are the constants of PlainRun's masks.
var runMasks = [5]uint64{lsb * 0x02, lsb * 0x21, lsb * '\\', lsb, msb}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

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
