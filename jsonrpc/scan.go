package jsonrpc

import (
	"encoding/binary"
	"math/bits"
	"unicode/utf16"
	"unicode/utf8"
)

// maxDepth is the deepest nesting of arrays and objects accepted, the same
// limit as encoding/json, so that both agree on what is valid.
const maxDepth = 10000

// errCode names a syntax error; a number rather than a string so that
// recording one never makes the frame escape to the heap.
type errCode uint8

const (
	errControlChar errCode = iota + 1
	errTrailingData
	errEmpty
	errTooDeep
	errArraySep
	errObjectSep
	errColon
	errBadUnicodeEscape
	errBadValue
	errBadEscape
	errBadLiteral
	errBadNumber
	errBadFraction
	errBadExponent
	errKeyNotString
	errShortUnicodeEscape
	errShortNumber
	errEOFContainer
	errEOFArray
	errEOFObject
	errEOFKey
	errEOFValue
	errUnterminated
)

var errMessages = [...]string{
	errControlChar:        "control character in string",
	errTrailingData:       "data after the top-level value",
	errEmpty:              "empty frame",
	errTooDeep:            "exceeded max nesting depth",
	errArraySep:           "expected ',' or ']' in array",
	errObjectSep:          "expected ',' or '}' in object",
	errColon:              "expected ':' after object key",
	errBadUnicodeEscape:   "invalid \\u escape in string",
	errBadValue:           "invalid character, want a value",
	errBadEscape:          "invalid escape in string",
	errBadLiteral:         "invalid literal",
	errBadNumber:          "invalid number",
	errBadFraction:        "invalid number: no digit after '.'",
	errBadExponent:        "invalid number: no digit in exponent",
	errKeyNotString:       "object key is not a string",
	errShortUnicodeEscape: "truncated \\u escape in string",
	errShortNumber:        "truncated number",
	errEOFContainer:       "unexpected end of input in array or object",
	errEOFArray:           "unexpected end of input in array",
	errEOFObject:          "unexpected end of input in object",
	errEOFKey:             "unexpected end of input, want a key",
	errEOFValue:           "unexpected end of input, want a value",
	errUnterminated:       "unterminated string",
}

// scanner validates JSON in place. Its methods take a position in b and
// return the position after what they consumed, or -1 after recording the
// first syntax error (offset and code, so that failing does not allocate
// either).
type scanner struct {
	b       []byte
	errOff  int
	err     errCode // 0 while no error
	badUTF8 bool    // some string held bytes that are not valid UTF-8

	// With list set (ClassifyMembers), the members of params and result
	// objects are appended to members; paramsAt and resultAt say where
	// those of the last params and result are.
	list               bool
	members            []Member
	paramsAt, resultAt memberRange
}

// fail records the first error and returns -1.
func (s *scanner) fail(off int, code errCode) int {
	if s.err == 0 {
		s.errOff, s.err = off, code
	}
	return -1
}

// failed reports whether an error was recorded.
func (s *scanner) failed() bool { return s.err != 0 }

// ws skips JSON whitespace from i.
func (s *scanner) ws(i int) int {
	b := s.b
	for i < len(b) {
		// Most calls find no whitespace: one comparison tells.
		if c := b[i]; c > ' ' || (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
			return i
		}
		i++
	}
	return i
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// str scans the string whose opening quote is at b[i]. It returns the
// position after the closing quote, and whether the string holds an escape.
func (s *scanner) str(i int) (int, bool) {
	b := s.b
	start := i
	i++
	esc := false
	var high uint64 // OR of all words: its top bits tell whether any byte >= 0x80
	for {
		// Eight bytes at a time until a quote, a backslash or a control
		// byte: the lowest flagged byte of the mask is always a true hit
		// (borrows only produce false hits above a true one). A byte c is
		// a quote or a control byte exactly when c^2 <= 0x20 (the quote
		// 0x22 becomes 0x20, bytes below 0x20 stay below it): one test
		// for both. Walking a sub-slice spares the bounds checks.
		rest := b[i:]
		for len(rest) >= 8 {
			w := binary.LittleEndian.Uint64(rest)
			qc := w ^ (lsb * 0x02)
			bs := w ^ (lsb * '\\')
			m := ((qc - lsb*0x21) &^ qc) | ((bs - lsb) &^ bs)
			if m &= msb; m != 0 {
				// Only bytes before the hit belong to the string for sure.
				high |= w & (m&-m - 1)
				rest = rest[bits.TrailingZeros64(m)>>3:]
				break
			}
			high |= w
			rest = rest[8:]
		}
		if len(rest) == 0 {
			return s.fail(start, errUnterminated), esc
		}
		i = len(b) - len(rest)
		switch c := rest[0]; {
		case c == '"':
			if high&msb != 0 && !utf8.Valid(b[start+1:i]) {
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
		default:
			high |= uint64(c)
			i++
		}
	}
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
	w := binary.LittleEndian.Uint64(s.b[i+1:])
	qc, bs := w^(lsb*0x02), w^(lsb*'\\')
	// The lowest flagged byte is a quote, a control byte, a backslash or
	// a byte >= 0x80: plain ASCII before it (b[i+9] when none is).
	n := i + 1 + bits.TrailingZeros64((((qc-lsb*0x21)&^qc)|((bs-lsb)&^bs)|w)&msb)>>3
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

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// num scans the number starting at b[i].
func (s *scanner) num(i int) int {
	b := s.b
	start := i
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return s.fail(start, errShortNumber)
	case b[i] == '0':
		i++
	case '1' <= b[i] && b[i] <= '9':
		i++
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return s.fail(i, errBadNumber)
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return s.fail(i, errBadFraction)
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
			return s.fail(i, errBadExponent)
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	return i
}

// lit scans the literal word (true, false, null) at b[i].
func (s *scanner) lit(i int, word string) int {
	if len(s.b)-i < len(word) || string(s.b[i:i+len(word)]) != word {
		return s.fail(i, errBadLiteral)
	}
	return i + len(word)
}

// key scans an object key at b[i] (after whitespace) and the colon after it,
// returning the position after the colon.
func (s *scanner) key(i int) int {
	if i >= len(s.b) {
		return s.fail(i, errEOFKey)
	}
	if s.b[i] != '"' {
		return s.fail(i, errKeyNotString)
	}
	if end, ok := s.shortStr(i); ok {
		i = end
	} else if i, _ = s.str(i); i < 0 {
		return -1
	}
	i = s.ws(i)
	if i >= len(s.b) || s.b[i] != ':' {
		return s.fail(i, errColon)
	}
	return i + 1
}

// value validates the JSON value starting at or after i (whitespace first)
// and returns the position after it. depth is the number of arrays and
// objects already open around it. It does not recurse: nesting is tracked
// with a bit stack, one bit per level (1 for an object).
func (s *scanner) value(i, depth int) int {
	b := s.b
	var small uint64 // levels 0..63
	var big []uint64 // levels 64 and deeper, allocated when first needed
	level := 0
next:
	for {
		i = s.ws(i)
		if i >= len(b) {
			return s.fail(i, errEOFValue)
		}
		switch c := b[i]; c {
		case '{', '[':
			if depth+level >= maxDepth {
				return s.fail(i, errTooDeep)
			}
			obj := c == '{'
			if level < 64 {
				small = small&^(1<<level) | b2u(obj)<<level
			} else {
				if big == nil {
					big = make([]uint64, maxDepth/64+1)
				}
				w, n := level>>6, uint(level&63)
				big[w] = big[w]&^(1<<n) | b2u(obj)<<n
			}
			level++
			i = s.ws(i + 1)
			if i < len(b) && (c == '{' && b[i] == '}' || c == '[' && b[i] == ']') {
				level--
				i++
				break
			}
			if obj {
				if i = s.key(i); i < 0 {
					return -1
				}
			}
			continue next
		case '"':
			if end, ok := s.shortStr(i); ok {
				i = end
			} else {
				i, _ = s.str(i)
			}
		case 't':
			i = s.lit(i, "true")
		case 'f':
			i = s.lit(i, "false")
		case 'n':
			i = s.lit(i, "null")
		default:
			if c != '-' && !isDigit(c) {
				return s.fail(i, errBadValue)
			}
			i = s.num(i)
		}
		if i < 0 {
			return -1
		}
		// After a value: close containers until one continues with ','.
		for level > 0 {
			i = s.ws(i)
			if i >= len(b) {
				return s.fail(i, errEOFContainer)
			}
			var obj bool
			if l := level - 1; l < 64 {
				obj = small&(1<<l) != 0
			} else {
				obj = big[l>>6]&(1<<(l&63)) != 0
			}
			switch c := b[i]; {
			case c == ',':
				i++
				if obj {
					if i = s.key(s.ws(i)); i < 0 {
						return -1
					}
				}
				continue next
			case obj && c == '}', !obj && c == ']':
				level--
				i++
			case obj:
				return s.fail(i, errObjectSep)
			default:
				return s.fail(i, errArraySep)
			}
		}
		return i
	}
}

// b2u converts a bool to 0 or 1.
func b2u(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}

// skip validates the value at b[i] (no whitespace before it) and returns
// the position after it: strings and numbers directly, the rest by value.
func (s *scanner) skip(i, depth int) int {
	if i < len(s.b) {
		switch c := s.b[i]; {
		case c == '"':
			if end, ok := s.shortStr(i); ok {
				return end
			}
			end, _ := s.str(i)
			return end
		case isDigit(c) || c == '-':
			return s.num(i)
		}
	}
	return s.value(i, depth)
}

// objIter walks the members of one object, leaving the values to its user:
// after next returns a member, the user scans the value starting at it.i
// and stores the position after it back in it.i.
type objIter struct {
	s *scanner
	i int // after '{' at first; then after each value
	n int // members returned so far
}

// next returns the span of the next member's key (quotes included) and
// whether the key holds escapes. ok is false at the closing brace (it.i is
// then after it) or on a syntax error (it.s.failed() is then true).
func (it *objIter) next() (ks, ke int, esc, ok bool) {
	s := it.s
	b := s.b
	i := s.ws(it.i)
	if i >= len(b) {
		s.fail(i, errEOFObject)
		return
	}
	if b[i] == '}' {
		it.i = i + 1
		return
	}
	if it.n > 0 {
		if b[i] != ',' {
			s.fail(i, errObjectSep)
			return
		}
		i = s.ws(i + 1)
	}
	if i >= len(b) || b[i] != '"' {
		s.fail(i, errKeyNotString)
		return
	}
	ks = i
	if end, short := s.shortStr(i); short {
		ke = end
	} else if ke, esc = s.str(i); ke < 0 {
		return
	}
	i = s.ws(ke)
	if i >= len(b) || b[i] != ':' {
		s.fail(i, errColon)
		return
	}
	it.i = s.ws(i + 1)
	it.n++
	return ks, ke, esc, true
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
				dst = append(dst, unescapeChar(raw[i+1]))
				i += 2
				continue
			}
			r, ok := hex4(raw, i+2)
			if !ok {
				dst = append(dst, c)
				i++
				continue
			}
			i += 6
			if utf16.IsSurrogate(r) {
				r2, ok2 := rune(-1), false
				if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					r2, ok2 = hex4(raw, i+2)
				}
				if dec := utf16.DecodeRune(r, r2); ok2 && dec != utf8.RuneError {
					r = dec
					i += 6
				} else {
					r = utf8.RuneError
				}
			}
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

// unescapeChar returns the byte a one-letter escape stands for.
func unescapeChar(c byte) byte {
	switch c {
	case 'b':
		return '\b'
	case 'f':
		return '\f'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	}
	return c // '"', '\\', '/'
}

// hex4 decodes the four hex digits at raw[i:i+4].
func hex4(raw []byte, i int) (rune, bool) {
	if i+4 > len(raw) {
		return 0, false
	}
	var r rune
	for _, h := range raw[i : i+4] {
		v := unhex(h)
		if v < 0 {
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}
