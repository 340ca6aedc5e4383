package jsonrpc

import (
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// Kind is what a frame is, as far as JSON-RPC is concerned.
type Kind uint8

const (
	// KindInvalid is a frame that is not a JSON-RPC message: invalid JSON, a
	// top-level value that is neither an object nor an array, or an object
	// with no method, result or error.
	KindInvalid Kind = iota
	// KindRequest has a method and an id.
	KindRequest
	// KindNotification has a method and no id.
	KindNotification
	// KindResponse has an id and a result (and no method or error).
	KindResponse
	// KindError has an error (and no method).
	KindError
	// KindBatch is a top-level JSON array.
	KindBatch
)

var kindNames = [...]string{"invalid", "request", "notification", "response", "error", "batch"}

// String returns the kind's lower-case name, such as "request".
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// IDType is the JSON type of an id, a progress token or a cancel target.
type IDType uint8

const (
	// IDAbsent means the key is not in the frame.
	IDAbsent IDType = iota
	// IDNull is the JSON literal null.
	IDNull
	// IDString is a JSON string.
	IDString
	// IDNumber is a JSON number (integer or not).
	IDNumber
	// IDOther is an object, an array or a boolean.
	IDOther
)

var idTypeNames = [...]string{"absent", "null", "string", "number", "other"}

// String returns the type's name, such as "string".
func (t IDType) String() string {
	if int(t) < len(idTypeNames) {
		return idTypeNames[t]
	}
	return "idtype(" + strconv.Itoa(int(t)) + ")"
}

// ID is an identifier value found in a frame: a request or response id, a
// progress token or a cancel target. It keeps the raw JSON bytes so that it
// can be written back exactly and rewritten in place.
type ID struct {
	// Raw is the value's raw JSON bytes, a sub-slice of the frame (nil when
	// absent). It shares memory with the frame.
	Raw []byte
	// Type is the JSON type of Raw.
	Type IDType
	// Start and End are the byte offsets of Raw in the frame:
	// Raw == frame[Start:End].
	Start, End int
}

// String returns the id's raw JSON text (`7`, `"abc"`, `null`), or "" when
// the id is absent.
func (id ID) String() string { return string(id.Raw) }

// Key returns a canonical form of the id for use as a map key: two ids have
// the same key exactly when they are the same id. See [ID.AppendKey].
//
// It is the one rule of id identity in mcptape, JSON-RPC 2.0's: ids match
// by value, as the official MCP SDKs match an answer with its request (the
// Go SDK decodes a number id as a float64 and keeps its integer, the
// TypeScript SDK looks the answer up by Number(id)): 1, 1.0 and 1e0 are
// one id, "1" another. inspect pairs by it (analysis.Pairer), mock matches
// the client's answers and cancels by it, replay keeps one live id per
// recorded value by it (see [ID.Integer]).
func (id ID) Key() string { return string(id.AppendKey(nil)) }

// Integer reports whether the id is a number of integral value below 2^53
// (1, 1.0, 1e0, 10e-1, -3): by [ID.Key], the same id as the integer of
// that value, whatever its spelling.
func (id ID) Integer() bool {
	if id.Type != IDNumber {
		return false
	}
	if isIntegerSyntax(id.Raw) {
		return true
	}
	k := appendNumberKey(nil, id.Raw)
	if len(k) > 0 && k[0] == '-' {
		k = k[1:]
	}
	for _, c := range k {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(k) > 0
}

// AppendKey appends the id's canonical form to dst and returns the result.
//
// Strings become `"` + their unescaped content + `"` (so "a" and "\u0061" are
// equal); integers their decimal text without a sign on zero; other numbers
// that hold an integral value below 2^53 the same decimal text (7.0 and 7e0
// equal 7), the rest their shortest float64 form, or their raw text when out
// of float64 range; null becomes `null`; objects and arrays their compact
// JSON with the keys of every object sorted and every number and string in
// the canonical form above (so {"a":1} and { "a": 1.0 } equal: a server
// that echoes an object id re-encoded answers the same id); booleans keep
// their raw text; an absent id appends nothing. A string id never equals a
// number id: "7" and 7 differ.
func (id ID) AppendKey(dst []byte) []byte {
	switch id.Type {
	case IDString:
		if len(id.Raw) < 2 {
			return append(dst, id.Raw...)
		}
		dst = append(dst, '"')
		dst = appendUnquoted(dst, id.Raw[1:len(id.Raw)-1])
		return append(dst, '"')
	case IDNumber:
		return appendNumberKey(dst, id.Raw)
	case IDOther:
		return appendValueKey(dst, id.Raw)
	default:
		return append(dst, id.Raw...)
	}
}

// appendNumberKey appends the canonical text of the JSON number raw.
func appendNumberKey(dst, raw []byte) []byte {
	if isIntegerSyntax(raw) {
		if allZeroInteger(raw) {
			return append(dst, '0')
		}
		return append(dst, raw...)
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(f, 0) {
		return append(dst, raw...)
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.AppendInt(dst, int64(f), 10)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64)
}

// isIntegerSyntax reports whether raw, a valid JSON number, has neither a
// fraction nor an exponent.
func isIntegerSyntax(raw []byte) bool {
	for _, c := range raw {
		if c == '.' || c == 'e' || c == 'E' {
			return false
		}
	}
	return true
}

// allZeroInteger reports whether raw, a valid integer, is 0 or -0.
func allZeroInteger(raw []byte) bool {
	return (len(raw) == 1 && raw[0] == '0') || (len(raw) == 2 && raw[0] == '-' && raw[1] == '0')
}

// scalarInteger reports whether the id is a string or an integer, the types
// MCP allows for ids, progress tokens and cancel targets.
func (id ID) scalarInteger() bool {
	return id.Type == IDString || (id.Type == IDNumber && isIntegerSyntax(id.Raw))
}

// Info is what Classify learned about a frame.
type Info struct {
	// Kind is the frame's kind.
	Kind Kind
	// ID is the request or response id (absent for notifications, batches
	// and invalid frames).
	ID ID
	// Method is the unescaped method name of a request or notification.
	// Known MCP method names are interned constants.
	Method string
	// ErrorCode is error.code of an error response, valid when HasErrorCode.
	ErrorCode int64
	// HasErrorCode reports whether error.code is present and an integer.
	HasErrorCode bool
	// ProgressToken is params._meta.progressToken of a request, or
	// params.progressToken of notifications/progress.
	ProgressToken ID
	// CancelTarget is params.requestId of notifications/cancelled.
	CancelTarget ID
	// BatchLen is the number of members of a batch.
	BatchLen int
	// Violations are the protocol rules the frame breaks.
	Violations Violation
}

// Violation is a bit set of protocol rules a frame breaks. Each bit has a
// stable short name (see [Violation.Names]) safe to store in reports.
type Violation uint32

const (
	// ViolationInvalidJSON: the frame is not valid JSON. Nothing else is
	// reported for such a frame.
	ViolationInvalidJSON Violation = 1 << iota
	// ViolationNotObject: the top-level value is a string, number or literal.
	ViolationNotObject
	// ViolationMissingJSONRPC: no "jsonrpc" key.
	ViolationMissingJSONRPC
	// ViolationWrongJSONRPC: "jsonrpc" is not the string "2.0".
	ViolationWrongJSONRPC
	// ViolationNullRequestID: a request's id is null.
	ViolationNullRequestID
	// ViolationBadIDType: an id is an object, an array or a boolean.
	ViolationBadIDType
	// ViolationNonIntegerID: an id is a number with a fraction or exponent.
	ViolationNonIntegerID
	// ViolationResultAndError: both "result" and "error" are present.
	ViolationResultAndError
	// ViolationNoResultOrError: an id without method, result or error.
	ViolationNoResultOrError
	// ViolationBadErrorCode: error.code is missing or not an int64 integer.
	ViolationBadErrorCode
	// ViolationMissingErrorMessage: error.message is missing or not a string.
	ViolationMissingErrorMessage
	// ViolationErrorNotObject: "error" is not an object.
	ViolationErrorNotObject
	// ViolationEmptyBatch: the frame is an empty array.
	ViolationEmptyBatch
	// ViolationBadMethod: "method" is not a string.
	ViolationBadMethod
	// ViolationMethodWithResult: "method" together with "result" or "error".
	ViolationMethodWithResult
	// ViolationResultWithoutID: a success response with an absent or null id.
	ViolationResultWithoutID
	// ViolationNotMessage: an object with none of method, id, result, error.
	ViolationNotMessage
	// ViolationBadParams: "params" of a request or notification is not an
	// object or an array.
	ViolationBadParams
	// ViolationBadProgressToken: the progress token is not a string or an
	// integer, or notifications/progress has none.
	ViolationBadProgressToken
	// ViolationBadCancelTarget: requestId of notifications/cancelled is not a
	// string or an integer.
	ViolationBadCancelTarget
	// ViolationInvalidUTF8: a string in the frame is not valid UTF-8.
	ViolationInvalidUTF8

	violationCount = iota
)

var violationNames = [violationCount]string{
	"invalid-json",
	"not-object",
	"missing-jsonrpc",
	"wrong-jsonrpc",
	"null-request-id",
	"bad-id-type",
	"non-integer-id",
	"result-and-error",
	"no-result-or-error",
	"bad-error-code",
	"missing-error-message",
	"error-not-object",
	"empty-batch",
	"bad-method",
	"method-with-result",
	"result-without-id",
	"not-a-message",
	"bad-params",
	"bad-progress-token",
	"bad-cancel-target",
	"invalid-utf8",
}

// Has reports whether every bit of x is set in v.
func (v Violation) Has(x Violation) bool { return v&x == x }

// Names returns the stable names of the set bits, lowest bit first, such as
// ["missing-jsonrpc", "null-request-id"]. Unknown bits are named "bit-N".
func (v Violation) Names() []string {
	if v == 0 {
		return nil
	}
	names := make([]string, 0, bits.OnesCount32(uint32(v)))
	for rest := uint32(v); rest != 0; rest &= rest - 1 {
		n := bits.TrailingZeros32(rest)
		if n < violationCount {
			names = append(names, violationNames[n])
		} else {
			names = append(names, "bit-"+strconv.Itoa(n))
		}
	}
	return names
}

// String returns the names joined by ",", or "none" for an empty set.
func (v Violation) String() string {
	if v == 0 {
		return "none"
	}
	return strings.Join(v.Names(), ",")
}

// ParseViolation returns the violation bit with the given stable name.
func ParseViolation(name string) (Violation, bool) {
	for i, n := range violationNames {
		if n == name {
			return 1 << i, true
		}
	}
	return 0, false
}
