package tape

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/mcptape/mcptape/internal/jsonstr"
)

// frameKind is how a message frame is stored in its record.
type frameKind uint8

const (
	frameJSON frameKind = iota // "frame": the bytes verbatim
	frameText                  // "text": a JSON string
	frameB64                   // "b64": standard base64
)

// classify decides how a frame is stored: verbatim when validEmbeddable,
// else as text when valid UTF-8, else as base64. An empty frame is text.
func classify(frame []byte) frameKind {
	switch {
	case validEmbeddable(frame):
		return frameJSON
	case utf8.Valid(frame):
		return frameText
	default:
		return frameB64
	}
}

// classifyValid is classify for a frame whose JSON validity is already
// known: validJSON says whether it is one valid JSON value, as
// jsonrpc.Validate (or jsonrpc.Classify, which agrees with it) says.
func classifyValid(frame []byte, validJSON bool) frameKind {
	switch {
	case !utf8.Valid(frame):
		return frameB64
	case validJSON && embeddableShape(frame):
		return frameJSON
	default:
		return frameText
	}
}

// errBadRecord marks a Record that Write refuses (the writer stays usable).
var errBadRecord = errors.New("bad record")

// checkRecord validates r for writing and returns the event data to write:
// r.Data itself, or a compacted copy when it spans several lines.
func checkRecord(r *Record) (json.RawMessage, error) {
	switch r.Type {
	case TypeMessage:
		return nil, nil
	case TypeEvent:
		if r.Event == "" {
			return nil, fmt.Errorf("%w: event record without an event name", errBadRecord)
		}
		if len(r.Data) == 0 || r.DataValid || validEmbeddable(r.Data) {
			return r.Data, nil
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, r.Data); err != nil {
			return nil, fmt.Errorf("%w: event %q: data is not valid JSON: %w", errBadRecord, r.Event, err)
		}
		if !utf8.Valid(buf.Bytes()) {
			return nil, fmt.Errorf("%w: event %q: data is not valid UTF-8", errBadRecord, r.Event)
		}
		return buf.Bytes(), nil
	case TypeHeader:
		return nil, fmt.Errorf("%w: the header is written by Create/NewWriter, not Write", errBadRecord)
	default:
		return nil, fmt.Errorf("%w: unknown record type %q", errBadRecord, r.Type)
	}
}

// appendRecord appends r as one JSON line (with its '\n') to dst. Keys come
// in the fixed order documented in docs/tape-format.md, empty ones omitted.
// kind tells how a message frame is stored; data is the event payload as
// returned by checkRecord.
func appendRecord(dst []byte, r *Record, kind frameKind, data json.RawMessage) []byte {
	dst = append(dst, `{"type":`...)
	dst = jsonstr.AppendString(dst, string(r.Type))
	if r.Time != 0 {
		dst = append(dst, `,"time":`...)
		dst = strconv.AppendInt(dst, r.Time, 10)
	}
	if r.Session != "" {
		dst = append(dst, `,"session":`...)
		dst = jsonstr.AppendString(dst, r.Session)
	}
	if r.Dir != "" {
		dst = append(dst, `,"dir":`...)
		dst = jsonstr.AppendString(dst, string(r.Dir))
	}
	if r.Exchange != 0 {
		dst = append(dst, `,"exchange":`...)
		dst = strconv.AppendUint(dst, r.Exchange, 10)
	}
	if r.Stream != "" {
		dst = append(dst, `,"stream":`...)
		dst = jsonstr.AppendString(dst, r.Stream)
	}
	if r.EventID != "" {
		dst = append(dst, `,"event_id":`...)
		dst = jsonstr.AppendString(dst, r.EventID)
	}
	if r.Event != "" {
		dst = append(dst, `,"event":`...)
		dst = jsonstr.AppendString(dst, r.Event)
	}
	if len(data) != 0 {
		dst = append(dst, `,"data":`...)
		dst = append(dst, data...)
	}
	if r.NoEOL {
		dst = append(dst, `,"noeol":true`...)
	}
	if r.Type == TypeMessage {
		switch kind {
		case frameJSON:
			dst = append(dst, `,"frame":`...)
			dst = append(dst, r.Frame...)
		case frameText:
			dst = append(dst, `,"text":`...)
			dst = jsonstr.AppendString(dst, r.Frame)
		default:
			dst = append(dst, `,"b64":"`...)
			n := len(dst)
			dst = append(dst, make([]byte, base64.StdEncoding.EncodedLen(len(r.Frame)))...)
			base64.StdEncoding.Encode(dst[n:], r.Frame)
			dst = append(dst, '"')
		}
	}
	return append(dst, "}\n"...)
}

// headerLine is the header record as encoding/json writes it: "type" first,
// then the Header fields in declaration order.
type headerLine struct {
	Type Type `json:"type"`
	*Header
}

// appendHeader appends the header record line to dst.
func appendHeader(dst []byte, h *Header) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(headerLine{Type: TypeHeader, Header: h}); err != nil {
		return dst, fmt.Errorf("encode header: %w", err)
	}
	return append(dst, buf.Bytes()...), nil // Encode ends the line with '\n'
}
