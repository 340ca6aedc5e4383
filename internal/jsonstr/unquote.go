package jsonstr

import (
	"unicode/utf16"
	"unicode/utf8"
)

// The escapes of a JSON string, decoded as encoding/json decodes them: for
// the tape reader's string parser (which checks its input) and jsonrpc's
// (whose input was checked before).

// UnescapeChar returns the byte that the one-letter escape \c stands for,
// and false when JSON defines no such escape (\u is UnicodeEscape's).
func UnescapeChar(c byte) (byte, bool) {
	switch c {
	case '"', '\\', '/':
		return c, true
	case 'b':
		return '\b', true
	case 'f':
		return '\f', true
	case 'n':
		return '\n', true
	case 'r':
		return '\r', true
	case 't':
		return '\t', true
	}
	return 0, false
}

// UnicodeEscape decodes the \uXXXX escape whose backslash is b[i]: a high
// surrogate escaped and followed by an escaped low one is one rune, and a
// lone or broken surrogate is U+FFFD. It returns the rune and the bytes
// decoded (6, or 12 for a pair); ok is false when the four hex digits are
// not there.
func UnicodeEscape(b []byte, i int) (r rune, n int, ok bool) {
	if r, ok = hex4(b, i+2); !ok {
		return 0, 0, false
	}
	if !utf16.IsSurrogate(r) {
		return r, 6, true
	}
	if i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
		if r2, ok2 := hex4(b, i+8); ok2 {
			if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
				return d, 12, true
			}
		}
	}
	return utf8.RuneError, 6, true
}

// hex4 decodes the four hex digits at b[i:i+4].
func hex4(b []byte, i int) (rune, bool) {
	if i < 0 || i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
