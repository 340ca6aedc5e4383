package tape

import (
	"bytes"
	"unicode/utf8"

	"github.com/mcptape/mcptape/internal/jsonstr"
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
// none), eight bytes at a time (jsonstr.PlainRun).
func skipPlain[T ~string | ~[]byte](b T, i int) int { return jsonstr.PlainRun(b, i) }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
