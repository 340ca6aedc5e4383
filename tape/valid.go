package tape

import (
	"bytes"
	"unicode/utf8"

	"github.com/mcptape/mcptape/jsonrpc"
)

// validEmbeddable reports whether b can be written into a record as a raw
// JSON value and cut back out byte-exactly: b is one valid JSON value, valid
// UTF-8, with no leading or trailing whitespace and no '\n' or '\r' byte
// anywhere (spaces and tabs between tokens are allowed).
//
// JSON validity is jsonrpc.Validate, which agrees with json.Valid (nesting
// limit included), so a frame embedded as JSON always parses back.
func validEmbeddable(b []byte) bool {
	return embeddableShape(b) && utf8.Valid(b) && jsonrpc.Validate(b) == nil
}

// embeddableShape is the part of validEmbeddable that is not validation:
// b is not empty, has no leading or trailing whitespace and no '\n' or
// '\r' byte.
func embeddableShape(b []byte) bool {
	return len(b) != 0 && !isSpace(b[0]) && !isSpace(b[len(b)-1]) &&
		bytes.IndexByte(b, '\n') < 0 && bytes.IndexByte(b, '\r') < 0
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

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

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
