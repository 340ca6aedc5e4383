package jsonrpc

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
	errTooDeep:            "arrays and objects nested deeper than the limit of 10000",
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

	// numFrac reports whether the last number num scanned had a fraction
	// or an exponent.
	numFrac bool

	// deep is value's bit stack for levels 64 and deeper, allocated when
	// first needed (value sets a level's bit when it opens it: what an
	// earlier value left does not matter).
	deep []uint64
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

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// num scans the number starting at b[i].
func (s *scanner) num(i int) int {
	b := s.b
	start := i
	s.numFrac = false
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
		s.numFrac = true
		if i >= len(b) || !isDigit(b[i]) {
			return s.fail(i, errBadFraction)
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		s.numFrac = true
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
	var small uint64 // levels 0..63; deeper ones in s.deep
	level := 0
next:
	for {
		i = s.ws(i)
		if i >= len(b) {
			return s.fail(i, errEOFValue)
		}
		if c := b[i]; c == '"' { // the most common value first
			if end, ok := s.shortStr(i); ok {
				i = end
			} else if i, _ = s.str(i); i < 0 {
				return -1
			}
		} else if c == '{' || c == '[' {
			if depth+level >= maxDepth {
				return s.fail(i, errTooDeep)
			}
			obj := c == '{'
			if level < 64 {
				small = small&^(1<<level) | b2u(obj)<<level
			} else {
				s.push(level, obj)
			}
			level++
			i = s.ws(i + 1)
			if i < len(b) && (c == '{' && b[i] == '}' || c == '[' && b[i] == ']') {
				level--
				i++
			} else {
				if obj {
					if i = s.key(i); i < 0 {
						return -1
					}
				}
				continue next
			}
		} else if i = s.scalar(i, c); i < 0 {
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
				obj = s.deep[l>>6]&(1<<(l&63)) != 0
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

// push records in s.deep whether the container opened at level (64 or
// deeper) is an object.
func (s *scanner) push(level int, obj bool) {
	if s.deep == nil {
		s.deep = make([]uint64, maxDepth/64+1)
	}
	w, n := level>>6, uint(level&63)
	s.deep[w] = s.deep[w]&^(1<<n) | b2u(obj)<<n
}

// scalar scans the literal or number whose first byte c is at b[i].
func (s *scanner) scalar(i int, c byte) int {
	switch c {
	case 't':
		return s.lit(i, "true")
	case 'f':
		return s.lit(i, "false")
	case 'n':
		return s.lit(i, "null")
	}
	if c != '-' && !isDigit(c) {
		return s.fail(i, errBadValue)
	}
	return s.num(i)
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
//
// It reads compact JSON (no whitespace between tokens: the ',' or the
// '{' right before the key's quote, the ':' right after it, the value
// right after that) with as few tests as it can; anything else goes to
// nextAny.
func (it *objIter) next() (ks, ke int, esc, ok bool) {
	s := it.s
	b := s.b
	i := it.i
	if i >= len(b) {
		return it.nextAny()
	}
	switch c := b[i]; {
	case c == '}':
		it.i = i + 1
		return
	case it.n == 0:
		if c != '"' {
			return it.nextAny()
		}
	case c != ',' || i+1 >= len(b) || b[i+1] != '"':
		return it.nextAny()
	default:
		i++
	}
	return it.key(i)
}

// key reads the member key whose opening quote is at b[i], and the colon
// after it, for next and nextAny.
func (it *objIter) key(i int) (ks, ke int, esc, ok bool) {
	s := it.s
	b := s.b
	ks = i
	if end, short := s.shortStr(i); short {
		ke = end
	} else if ke, esc = s.str(i); ke < 0 {
		return
	}
	if ke+1 < len(b) && b[ke] == ':' && b[ke+1] > ' ' {
		it.i = ke + 1
	} else {
		i = s.ws(ke)
		if i >= len(b) || b[i] != ':' {
			s.fail(i, errColon)
			return
		}
		it.i = s.ws(i + 1)
	}
	it.n++
	return ks, ke, esc, true
}

// nextAny is next for any JSON.
func (it *objIter) nextAny() (ks, ke int, esc, ok bool) {
	s := it.s
	i, more := s.member(&it.i, it.n, '}', errEOFObject, errObjectSep)
	if !more {
		return
	}
	if i >= len(s.b) || s.b[i] != '"' {
		s.fail(i, errKeyNotString)
		return
	}
	return it.key(i)
}

// member finds the next member of an object or array whose reading is at
// *at, after n members, for objIter and arrIter: it skips white space and,
// after the first member, the ',' before it, and returns where the member
// starts. more is false at the closing byte end (*at is then after it) or
// on a syntax error (eof or sep).
func (s *scanner) member(at *int, n int, end byte, eof, sep errCode) (i int, more bool) {
	b := s.b
	i = s.ws(*at)
	if i >= len(b) {
		s.fail(i, eof)
		return i, false
	}
	if b[i] == end {
		*at = i + 1
		return i, false
	}
	if n > 0 {
		if b[i] != ',' {
			s.fail(i, sep)
			return i, false
		}
		i = s.ws(i + 1)
	}
	return i, true
}
