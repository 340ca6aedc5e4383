package tape

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/mcptape/mcptape/internal/jsonstr"
)

// This file parses one record line without reflection. Keys may come in
// any order and unknown keys are skipped (forward compatibility); the key
// order the Writer uses only makes the common case cheap. A null value
// leaves its field empty, except for "frame" and "data" where null is the
// value itself. Embedded values ("frame", "data") are cut out by
// finding where the value ends, not validated again: the zstd checksum
// already vouches for what the Writer wrote.

// lineParser parses record lines. It keeps a small table of strings seen
// (session ids, stream names) so that repeated ones are not allocated anew,
// and allocates Records in small slabs.
type lineParser struct {
	intern map[string]string
	last   string   // the last interned string, checked first
	slab   []Record // Records handed out next
}

const (
	maxInterned = 1024
	// slabSize Records are allocated at once: fewer allocations, at the cost
	// of a held Record keeping its slab (about 3 KB) alive.
	slabSize = 16
)

// newRecord returns a zeroed Record from the slab.
func (p *lineParser) newRecord() *Record {
	if len(p.slab) == 0 {
		p.slab = make([]Record, slabSize)
	}
	r := &p.slab[0]
	p.slab = p.slab[1:]
	return r
}

// internStr returns b as a string, reusing an earlier equal string.
func (p *lineParser) internStr(b []byte) string {
	if string(b) == p.last {
		return p.last
	}
	s, ok := p.intern[string(b)] // no allocation for the lookup
	if !ok {
		s = string(b)
		if p.intern == nil || len(p.intern) >= maxInterned {
			p.intern = make(map[string]string, 64)
		}
		p.intern[s] = s
	}
	p.last = s
	return s
}

// record keys whose value holds the message frame
const (
	keyFrame = 1 << iota
	keyText
	keyB64
)

// parse parses one line (without its '\n') into a new Record.
func (p *lineParser) parse(line []byte) (*Record, error) {
	var r Record
	i := skipWS(line, 0)
	if i >= len(line) || line[i] != '{' {
		return nil, errors.New("not a JSON object")
	}
	i = skipWS(line, i+1)
	if i < len(line) && line[i] == '}' {
		return nil, errors.New("record without a type")
	}
	frameKeys := 0
	for {
		if i >= len(line) || line[i] != '"' {
			return nil, fmt.Errorf("byte %d: expected a key", i)
		}
		ks, ke, esc, err := scanString(line, i)
		if err != nil {
			return nil, err
		}
		key := line[ks:ke]
		if esc {
			if key, err = unescape(key); err != nil {
				return nil, fmt.Errorf("key at byte %d: %w", i, err)
			}
		}
		i = skipWS(line, ke+1)
		if i >= len(line) || line[i] != ':' {
			return nil, fmt.Errorf("byte %d: expected ':'", i)
		}
		i = skipWS(line, i+1)
		if i, err = p.field(&r, string(key), line, i, &frameKeys); err != nil {
			return nil, fmt.Errorf("%q: %w", key, err)
		}
		i = skipWS(line, i)
		if i >= len(line) {
			return nil, errors.New("unterminated object")
		}
		if line[i] == ',' {
			i = skipWS(line, i+1)
			continue
		}
		if line[i] != '}' {
			return nil, fmt.Errorf("byte %d: expected ',' or '}'", i)
		}
		i++
		break
	}
	if skipWS(line, i) != len(line) {
		return nil, fmt.Errorf("byte %d: data after the record", i)
	}
	switch r.Type {
	case "":
		return nil, errors.New("record without a type")
	case TypeHeader:
		var h Header
		if err := json.Unmarshal(line, &h); err != nil {
			return nil, fmt.Errorf("header: %w", err)
		}
		r.Header = &h
	case TypeMessage:
		if frameKeys&(frameKeys-1) != 0 {
			return nil, errors.New("message with more than one of frame, text, b64")
		}
		if frameKeys == 0 {
			return nil, errors.New("message without frame, text or b64")
		}
	}
	rp := p.newRecord()
	*rp = r
	return rp, nil
}

// field parses the value at line[i:] of the key into r and returns the
// index after the value.
func (p *lineParser) field(r *Record, key string, line []byte, i int, frameKeys *int) (int, error) {
	if key != "frame" && key != "data" && isNull(line, i) { // null: the frame or payload null
		return i + 4, nil
	}
	var err error
	switch key {
	case "type":
		var s []byte
		if s, i, err = stringValue(line, i); err == nil {
			switch string(s) {
			case "message":
				r.Type = TypeMessage
			case "event":
				r.Type = TypeEvent
			case "header":
				r.Type = TypeHeader
			default:
				r.Type = Type(p.internStr(s))
			}
		}
	case "time":
		r.Time, i, err = intValue(line, i)
	case "session":
		var s []byte
		if s, i, err = stringValue(line, i); err == nil {
			r.Session = p.internStr(s)
		}
	case "dir":
		var s []byte
		if s, i, err = stringValue(line, i); err == nil {
			switch string(s) {
			case "c2s":
				r.Dir = ClientToServer
			case "s2c":
				r.Dir = ServerToClient
			default:
				r.Dir = Direction(p.internStr(s))
			}
		}
	case "exchange":
		var n int64
		if n, i, err = intValue(line, i); err == nil {
			if n < 0 {
				err = errors.New("negative")
			}
			r.Exchange = uint64(n)
		}
	case "stream":
		var s []byte
		if s, i, err = stringValue(line, i); err == nil {
			r.Stream = p.internStr(s)
		}
	case "event_id":
		var s []byte
		if s, i, err = stringValue(line, i); err == nil {
			r.EventID = string(s)
		}
	case "event":
		var s []byte
		if s, i, err = stringValue(line, i); err == nil {
			r.Event = p.internStr(s)
		}
	case "noeol":
		switch {
		case bytes.HasPrefix(line[i:], []byte("true")):
			r.NoEOL, i = true, i+4
		case bytes.HasPrefix(line[i:], []byte("false")):
			r.NoEOL, i = false, i+5
		default:
			err = errors.New("not a boolean")
		}
	case "data":
		var end int
		if end, err = skipValue(line, i); err == nil {
			r.Data = bytes.Clone(line[i:end])
			i = end
		}
	case "frame":
		var end int
		if end, err = skipValue(line, i); err == nil {
			r.Frame = bytes.Clone(line[i:end])
			*frameKeys |= keyFrame
			i = end
		}
	case "text":
		var s []byte
		if s, i, err = stringValue(line, i); err == nil {
			r.Frame = bytes.Clone(s)
			*frameKeys |= keyText
		}
	case "b64":
		var s []byte
		if s, i, err = stringValue(line, i); err == nil {
			r.Frame, err = decodeBase64(s)
			*frameKeys |= keyB64
		}
	default:
		i, err = skipValue(line, i)
	}
	return i, err
}

// decodeBase64 decodes standard base64, padded or not.
func decodeBase64(s []byte) ([]byte, error) {
	enc := base64.StdEncoding
	if len(s)%4 != 0 {
		enc = base64.RawStdEncoding
	}
	out := make([]byte, enc.DecodedLen(len(s)))
	n, err := enc.Decode(out, s)
	if err != nil {
		return nil, fmt.Errorf("base64: %w", err)
	}
	return out[:n], nil
}

func isNull(line []byte, i int) bool {
	return len(line)-i >= 4 && string(line[i:i+4]) == "null"
}

func skipWS(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// scanString finds the string starting at the quote b[i]: its content is
// b[start:end] and b[end] is the closing quote; esc tells whether the
// content holds escapes.
func scanString(b []byte, i int) (start, end int, esc bool, err error) {
	start = i + 1
	for j := start; j < len(b); j++ {
		j = skipPlain(b, j)
		if j >= len(b) {
			break
		}
		switch b[j] {
		case '"':
			return start, j, esc, nil
		case '\\':
			esc = true
			j++
		}
	}
	return 0, 0, false, fmt.Errorf("byte %d: unterminated string", i)
}

// stringValue parses the string at b[i] and returns its decoded content
// (aliasing b when it has no escapes) and the index after it.
func stringValue(b []byte, i int) ([]byte, int, error) {
	if i >= len(b) || b[i] != '"' {
		return nil, i, errors.New("not a string")
	}
	s, e, esc, err := scanString(b, i)
	if err != nil {
		return nil, i, err
	}
	if !esc {
		return b[s:e], e + 1, nil
	}
	out, err := unescape(b[s:e])
	return out, e + 1, err
}

// unescape decodes the escapes of a JSON string's content into a new slice.
// Lone or broken surrogates become U+FFFD, as with encoding/json.
func unescape(s []byte) ([]byte, error) {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			j := bytes.IndexByte(s[i:], '\\')
			if j < 0 {
				j = len(s) - i
			}
			out = append(out, s[i:i+j]...)
			i += j
			continue
		}
		if i+1 >= len(s) {
			return nil, errors.New("truncated escape")
		}
		if s[i+1] == 'u' {
			r, n, ok := jsonstr.UnicodeEscape(s, i)
			if !ok {
				return nil, errors.New("bad \\u escape")
			}
			out = utf8.AppendRune(out, r)
			i += n
			continue
		}
		e, ok := jsonstr.UnescapeChar(s[i+1])
		if !ok {
			return nil, fmt.Errorf("bad escape \\%c", s[i+1])
		}
		out = append(out, e)
		i += 2
	}
	return out, nil
}

// intValue parses an integer at b[i]. A number in another notation (as jq
// may print a large integer) is accepted when its value is integral.
func intValue(b []byte, i int) (int64, int, error) {
	j := i
	neg := j < len(b) && b[j] == '-'
	if neg {
		j++
	}
	var n uint64
	d := j
	for j < len(b) && isDigit(b[j]) && j-d < 19 { // 19 digits fit in a uint64
		n = n*10 + uint64(b[j]-'0')
		j++
	}
	if j > d && (j >= len(b) || !isNumberByte(b[j])) && n <= math.MaxInt64 {
		if neg {
			return -int64(n), j, nil
		}
		return int64(n), j, nil
	}
	// Slow path: long or non-integer notation.
	end := i
	for end < len(b) && isNumberByte(b[end]) {
		end++
	}
	s := string(b[i:end])
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, end, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return 0, i, fmt.Errorf("not an integer: %.40q", s)
	}
	return int64(f), end, nil
}

func isNumberByte(c byte) bool {
	return isDigit(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}

// skipValue returns the index just after the JSON value starting at b[i].
// It tracks strings and nesting but does not validate the value.
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return i, errors.New("missing value")
	}
	switch b[i] {
	case '"':
		_, e, _, err := scanString(b, i)
		return e + 1, err
	case '{', '[':
		// One tight loop over the bytes (faster than IndexByte calls for the
		// many short strings of a JSON-RPC message).
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				for j = skipPlain(b, j+1); j < len(b) && b[j] != '"'; j = skipPlain(b, j+1) {
					if b[j] == '\\' {
						j++
					}
				}
				if j >= len(b) {
					return i, fmt.Errorf("byte %d: unterminated string", i)
				}
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return i, fmt.Errorf("byte %d: unterminated value", i)
	case ',', '}', ']', ':':
		return i, fmt.Errorf("byte %d: missing value", i)
	}
	j := i
	for j < len(b) && !isSpace(b[j]) && b[j] != ',' && b[j] != '}' && b[j] != ']' {
		j++
	}
	return j, nil
}
