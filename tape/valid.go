package tape

import "unicode/utf8"

// maxDepth is the deepest nesting validEmbeddable accepts; encoding/json
// refuses the same depth, so a frame embedded as JSON always parses back.
const maxDepth = 10000

// validEmbeddable reports whether b can be written into a record as a raw
// JSON value and cut back out byte-exactly: b is one valid JSON value, valid
// UTF-8, with no leading or trailing whitespace and no '\n' or '\r' byte
// anywhere (spaces and tabs between tokens are allowed).
//
// It is a strict hand-written validator, several times faster than
// json.Valid, because every message record passes through it.
func validEmbeddable(b []byte) bool {
	if len(b) == 0 || isSpace(b[0]) || isSpace(b[len(b)-1]) {
		return false
	}
	v := validator{b: b}
	return v.value(0) && v.i == len(b)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// validator walks one JSON text; i is the index of the next unread byte.
type validator struct {
	b []byte
	i int
}

// skipSpace skips the whitespace allowed inside an embeddable frame.
func (v *validator) skipSpace() {
	for v.i < len(v.b) && (v.b[v.i] == ' ' || v.b[v.i] == '\t') {
		v.i++
	}
}

func (v *validator) value(depth int) bool {
	if v.i >= len(v.b) {
		return false
	}
	switch c := v.b[v.i]; {
	case c == '{':
		return v.object(depth + 1)
	case c == '[':
		return v.array(depth + 1)
	case c == '"':
		return v.str()
	case c == '-' || (c >= '0' && c <= '9'):
		return v.number()
	case c == 't':
		return v.literal("true")
	case c == 'f':
		return v.literal("false")
	case c == 'n':
		return v.literal("null")
	}
	return false
}

func (v *validator) literal(lit string) bool {
	if len(v.b)-v.i < len(lit) || string(v.b[v.i:v.i+len(lit)]) != lit {
		return false
	}
	v.i += len(lit)
	return true
}

func (v *validator) object(depth int) bool {
	if depth > maxDepth {
		return false
	}
	v.i++ // '{'
	v.skipSpace()
	if v.i < len(v.b) && v.b[v.i] == '}' {
		v.i++
		return true
	}
	for {
		if v.i >= len(v.b) || v.b[v.i] != '"' || !v.str() {
			return false
		}
		v.skipSpace()
		if v.i >= len(v.b) || v.b[v.i] != ':' {
			return false
		}
		v.i++
		v.skipSpace()
		if !v.value(depth) {
			return false
		}
		v.skipSpace()
		if v.i >= len(v.b) {
			return false
		}
		switch v.b[v.i] {
		case ',':
			v.i++
			v.skipSpace()
		case '}':
			v.i++
			return true
		default:
			return false
		}
	}
}

func (v *validator) array(depth int) bool {
	if depth > maxDepth {
		return false
	}
	v.i++ // '['
	v.skipSpace()
	if v.i < len(v.b) && v.b[v.i] == ']' {
		v.i++
		return true
	}
	for {
		if !v.value(depth) {
			return false
		}
		v.skipSpace()
		if v.i >= len(v.b) {
			return false
		}
		switch v.b[v.i] {
		case ',':
			v.i++
			v.skipSpace()
		case ']':
			v.i++
			return true
		default:
			return false
		}
	}
}

// str validates a string starting at the opening quote, including UTF-8.
func (v *validator) str() bool {
	b := v.b
	i := v.i + 1
	for i < len(b) {
		i = skipPlain(b, i)
		if i >= len(b) {
			break
		}
		c := b[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && size == 1 {
				return false
			}
			i += size
			continue
		}
		switch {
		case c == '"':
			v.i = i + 1
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if i+1 >= len(b) {
				return false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return false
				}
				i += 6
			default:
				return false
			}
		default:
			i++
		}
	}
	return false
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number validates -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (v *validator) number() bool {
	b := v.b
	i := v.i
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	v.i = i
	return true
}

// skipPlain returns the index of the first byte of b[i:] that is not plain
// string content: a control byte, '"', '\\' or a byte >= 0x80 (len(b) when
// none). It tests eight bytes at a time.
func skipPlain[T ~string | ~[]byte](b T, i int) int {
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
		if c := b[i]; c < 0x20 || c == '"' || c == '\\' || c >= utf8.RuneSelf {
			return i
		}
	}
	return i
}
