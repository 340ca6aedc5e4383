package jsonrpc

import (
	"errors"
	"fmt"
)

// Target names the value a rewrite replaces.
type Target uint8

const (
	// TargetID is the id of a request or a response.
	TargetID Target = iota + 1
	// TargetProgressToken is params._meta.progressToken of a request, or
	// params.progressToken of notifications/progress.
	TargetProgressToken
	// TargetCancelTarget is params.requestId of notifications/cancelled.
	TargetCancelTarget
)

// String returns the target's name, such as "id".
func (t Target) String() string {
	switch t {
	case TargetID:
		return "id"
	case TargetProgressToken:
		return "progress token"
	case TargetCancelTarget:
		return "cancel target"
	}
	return fmt.Sprintf("target(%d)", uint8(t))
}

// ErrNoTarget is returned (wrapped) by the rewrite functions when the frame
// does not hold the value to replace.
var ErrNoTarget = errors.New("value to rewrite not found")

// RewriteID returns a new frame equal to frame except that the id of the
// request or response is replaced by newRaw, which must be a JSON string or
// number. Keeping the id's JSON type is the caller's choice (see
// ID.Type): clients match responses by type.
func RewriteID(frame, newRaw []byte) ([]byte, error) {
	return AppendRewrite(nil, frame, TargetID, newRaw)
}

// RewriteProgressToken returns a new frame whose progress token (of a
// request, or of notifications/progress) is replaced by newRaw.
func RewriteProgressToken(frame, newRaw []byte) ([]byte, error) {
	return AppendRewrite(nil, frame, TargetProgressToken, newRaw)
}

// RewriteCancelTarget returns a new frame whose params.requestId of
// notifications/cancelled is replaced by newRaw.
func RewriteCancelTarget(frame, newRaw []byte) ([]byte, error) {
	return AppendRewrite(nil, frame, TargetCancelTarget, newRaw)
}

// AppendRewrite appends to dst the frame with the target value replaced by
// newRaw, every other byte kept. It does not allocate when dst has room.
// The frame must be a valid single message (not a batch: split it first)
// that holds the target, whatever the target's current type; newRaw must be
// exactly one JSON string (valid UTF-8) or number, without whitespace.
// On error dst is returned unchanged.
func AppendRewrite(dst, frame []byte, t Target, newRaw []byte) ([]byte, error) {
	if t < TargetID || t > TargetCancelTarget {
		return dst, fmt.Errorf("jsonrpc: rewrite: unknown target %d", uint8(t))
	}
	if err := checkScalar(newRaw); err != nil {
		return dst, fmt.Errorf("jsonrpc: rewrite %s: new value: %w", t, err)
	}
	info := Classify(frame)
	switch {
	case info.Violations.Has(ViolationInvalidJSON):
		err := Validate(frame)
		return dst, fmt.Errorf("jsonrpc: rewrite %s: %w", t, errors.Unwrap(err))
	case info.Kind == KindBatch:
		return dst, fmt.Errorf("jsonrpc: rewrite %s: frame is a batch of %d, split it first", t, info.BatchLen)
	}
	id := info.ID
	switch t {
	case TargetProgressToken:
		id = info.ProgressToken
	case TargetCancelTarget:
		id = info.CancelTarget
	}
	if id.Type == IDAbsent {
		return dst, fmt.Errorf("jsonrpc: rewrite %s: %w in %s frame", t, ErrNoTarget, info.Kind)
	}
	return Replace(dst, frame, id.Start, id.End, newRaw), nil
}

// checkScalar verifies that raw is exactly one JSON string or number.
func checkScalar(raw []byte) error {
	if len(raw) == 0 {
		return errors.New("empty, want a JSON string or number")
	}
	s := scanner{b: raw}
	var end int
	switch c := raw[0]; {
	case c == '"':
		end, _ = s.str(0)
	case c == '-' || isDigit(c):
		end = s.num(0)
	default:
		return fmt.Errorf("%q is not a JSON string or number", string(raw))
	}
	switch {
	case s.failed():
		return s.syntaxError()
	case end != len(raw):
		return &SyntaxError{Offset: end, Msg: "data after the value"}
	case s.badUTF8:
		return errors.New("string is not valid UTF-8")
	}
	return nil
}

// Replace appends frame[:start], newRaw and frame[end:] to dst and returns
// the result: the splice under the rewrite functions. The offsets are those
// of an ID (ID.Start, ID.End); like slicing, it panics unless
// 0 <= start <= end <= len(frame).
func Replace(dst, frame []byte, start, end int, newRaw []byte) []byte {
	_ = frame[start:end] // bounds check up front, before appending anything
	if need := len(dst) + start + len(newRaw) + len(frame) - end; cap(dst) < need {
		grown := make([]byte, len(dst), need)
		copy(grown, dst)
		dst = grown
	}
	dst = append(dst, frame[:start]...)
	dst = append(dst, newRaw...)
	return append(dst, frame[end:]...)
}
