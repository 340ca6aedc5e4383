package jsonrpc

import (
	"errors"
	"fmt"
)

// SyntaxError describes why a frame is not valid JSON and where.
type SyntaxError struct {
	// Offset is the byte offset in the frame where the problem was found.
	Offset int
	// Msg says what is wrong, such as errUnterminated.
	Msg string
	// TooDeep tells a frame whose arrays and objects nest deeper than the
	// limit (10000, encoding/json's): it may be valid JSON otherwise, but
	// it is not read further.
	TooDeep bool
}

// Error returns "invalid JSON at byte N: MSG", or "JSON too deep at byte
// N: MSG" for a frame nested deeper than the limit.
func (e *SyntaxError) Error() string {
	if e.TooDeep {
		return fmt.Sprintf("JSON too deep at byte %d: %s", e.Offset, e.Msg)
	}
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.Offset, e.Msg)
}

// ErrNotBatch is returned (wrapped) by Split for a valid frame that is not a
// JSON array.
var ErrNotBatch = errors.New("frame is not a JSON array")

// syntaxError returns the scanner's recorded error.
func (s *scanner) syntaxError() error {
	return &SyntaxError{Offset: s.errOff, Msg: errMessages[s.err], TooDeep: s.err == errTooDeep}
}

// Validate reports whether frame is one valid JSON value with optional
// surrounding whitespace, with the same verdict as json.Valid. On failure
// the error is a *SyntaxError naming the offset.
func Validate(frame []byte) error {
	s := scanner{b: frame}
	i := s.ws(0)
	if i >= len(frame) {
		s.fail(i, errEmpty)
	} else if i = s.value(i, 0); i >= 0 {
		if j := s.ws(i); j < len(frame) {
			s.fail(j, errTrailingData)
		}
	}
	if s.failed() {
		return fmt.Errorf("jsonrpc: %w", s.syntaxError())
	}
	return nil
}

// Split returns the members of a batch frame as sub-slices of frame,
// without surrounding whitespace. An empty array gives no members and no
// error. A frame that is not valid JSON gives an error wrapping a
// *SyntaxError; a valid frame that is not an array one wrapping ErrNotBatch.
func Split(frame []byte) ([][]byte, error) {
	return AppendSplit(nil, frame)
}

// AppendSplit is Split appending the members to dst; it does not allocate
// when dst has room for them. On error it returns dst unchanged.
func AppendSplit(dst [][]byte, frame []byte) ([][]byte, error) {
	s := scanner{b: frame}
	i := s.ws(0)
	if i >= len(frame) {
		return dst, fmt.Errorf("jsonrpc: split: %w", &SyntaxError{Offset: i, Msg: errMessages[errEmpty]})
	}
	if frame[i] != '[' {
		if err := Validate(frame); err != nil {
			return dst, fmt.Errorf("jsonrpc: split: %w", err)
		}
		return dst, fmt.Errorf("jsonrpc: split: %w (it starts with %q at byte %d)", ErrNotBatch, frame[i], i)
	}
	n := len(dst)
	it := arrIter{s: &s, i: i + 1}
	for {
		start, end, ok := it.next()
		if !ok {
			break
		}
		dst = append(dst, frame[start:end:end])
	}
	if !s.failed() {
		if j := s.ws(it.i); j < len(frame) {
			s.fail(j, errTrailingData)
		}
	}
	if s.failed() {
		clear(dst[n:])
		return dst[:n], fmt.Errorf("jsonrpc: split: %w", s.syntaxError())
	}
	return dst, nil
}
