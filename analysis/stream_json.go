package analysis

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"strconv"
)

// This file finds a few deep fields (params.name, result.isError, ...) in a
// frame without decoding it: the analysis needs them for a minority of
// messages and a full json.Unmarshal of every result would cost more than
// the rest of the work. The frames were validated by jsonrpc.Classify, so
// the walk does not validate again; on bad input it returns "not found",
// never panics and always ends (each step moves forward).

// lookup returns the raw JSON value found by following the object keys of
// path from the top-level value of data, or nil when any step is missing
// or not an object.
func lookup(data []byte, path ...string) []byte {
	start := skipSpace(data, 0)
	end := -1
	if len(path) == 0 {
		if end = skipValue(data, start); end < 0 {
			return nil
		}
	}
	for _, key := range path {
		start, end = member(data, start, key)
		if start < 0 {
			return nil
		}
	}
	return data[start:end]
}

// member returns the bounds of the value of key in the object starting at
// data[i], or -1, -1. When a key appears more than once the last wins, as
// with encoding/json and jsonrpc.Classify.
func member(data []byte, i int, key string) (int, int) {
	if i >= len(data) || data[i] != '{' {
		return -1, -1
	}
	fs, fe := -1, -1
	i = skipSpace(data, i+1)
	for i < len(data) && data[i] != '}' {
		ks := i
		ke := skipString(data, i)
		if ke < 0 {
			return -1, -1
		}
		i = skipSpace(data, ke)
		if i >= len(data) || data[i] != ':' {
			return -1, -1
		}
		vs := skipSpace(data, i+1)
		ve := skipValue(data, vs)
		if ve < 0 {
			return -1, -1
		}
		if keyEquals(data[ks:ke], key) {
			fs, fe = vs, ve
		}
		i = skipSpace(data, ve)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	return fs, fe
}

// keyEquals reports whether the quoted JSON string raw equals key.
func keyEquals(raw []byte, key string) bool {
	if len(raw) < 2 {
		return false
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner) == key
	}
	s, ok := stringValue(raw)
	return ok && s == key
}

func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index after the string starting at data[i], or -1.
// It looks at eight bytes at a time for a quote or a backslash: the strings
// of a JSON-RPC message are short and many, so a call per string to
// bytes.IndexByte costs more than the scan.
func skipString(data []byte, i int) int {
	if i >= len(data) || data[i] != '"' {
		return -1
	}
	const lsb, msb = 0x0101010101010101, 0x8080808080808080
	j := i + 1
	for {
		for ; j+8 <= len(data); j += 8 {
			x := binary.LittleEndian.Uint64(data[j:])
			q := x ^ (lsb * '"')
			b := x ^ (lsb * '\\')
			if m := ((q-lsb)&^q | (b-lsb)&^b) & msb; m != 0 {
				j += bits.TrailingZeros64(m) >> 3
				break
			}
		}
		for ; j < len(data) && data[j] != '"' && data[j] != '\\'; j++ {
		}
		if j >= len(data) {
			return -1
		}
		if data[j] == '"' {
			return j + 1
		}
		j += 2 // a backslash and the byte it escapes
	}
}

// skipValue returns the index after the JSON value starting at data[i], or
// -1 when there is none.
func skipValue(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for i < len(data) {
			switch data[i] {
			case '"':
				if i = skipString(data, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	case '}', ']', ',', ':':
		return -1
	default: // number or literal: up to the next delimiter
		j := i
		for j < len(data) {
			switch data[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r', ':', '"', '{', '[':
				if j == i {
					return -1
				}
				return j
			}
			j++
		}
		return j
	}
}

// stringValue returns the JSON string raw unquoted.
func stringValue(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false
	}
	if inner := raw[1 : len(raw)-1]; bytes.IndexByte(inner, '\\') < 0 {
		return string(inner), true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// lookupString returns the string at path, if there is one.
func lookupString(data []byte, path ...string) (string, bool) {
	return stringValue(lookup(data, path...))
}

// lookupNumber returns the number at path, if there is one.
func lookupNumber(data []byte, path ...string) (float64, bool) {
	return number(lookup(data, path...))
}

// number returns the JSON number raw, if it is one.
func number(raw []byte) (float64, bool) {
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	return f, err == nil
}

// span is the position of a value in a frame; absent when end is 0.
type span struct{ start, end int }

func (p span) of(data []byte) []byte {
	if p.end == 0 {
		return nil
	}
	return data[p.start:p.end]
}

// topFields walks data once: for the last member named top of the
// top-level object, when it is an object, it records in out[i] where the
// value of its member keys[i] is (the last one, when a key repeats). Other
// members are skipped without a second look. It reports whether the last
// top was found and is an object (the last wins, as with encoding/json and
// jsonrpc.ClassifyMembers). out must be as long as keys.
func topFields(data []byte, top string, keys []string, out []span) bool {
	i := skipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	found := false
	i = skipSpace(data, i+1)
	for i < len(data) && data[i] != '}' {
		ks := i
		ke := skipString(data, i)
		if ke < 0 {
			return found
		}
		i = skipSpace(data, ke)
		if i >= len(data) || data[i] != ':' {
			return found
		}
		vs := skipSpace(data, i+1)
		var ve int
		switch {
		case !keyEquals(data[ks:ke], top):
			ve = skipValue(data, vs)
		case vs < len(data) && data[vs] == '{':
			clear(out)
			found = true
			ve = objectFields(data, vs, keys, out)
		default: // a later top that is not an object hides an earlier one
			clear(out)
			found = false
			ve = skipValue(data, vs)
		}
		if ve < 0 {
			return found
		}
		i = skipSpace(data, ve)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	return found
}

// objectFields records the members keys of the object at data[i] into out
// and returns the index after the object, or -1.
func objectFields(data []byte, i int, keys []string, out []span) int {
	i = skipSpace(data, i+1)
	for i < len(data) && data[i] != '}' {
		ks := i
		ke := skipString(data, i)
		if ke < 0 {
			return -1
		}
		i = skipSpace(data, ke)
		if i >= len(data) || data[i] != ':' {
			return -1
		}
		vs := skipSpace(data, i+1)
		ve := skipValue(data, vs)
		if ve < 0 {
			return -1
		}
		name := data[ks+1 : ke-1]
		if bytes.IndexByte(name, '\\') >= 0 {
			if v, ok := stringValue(data[ks:ke]); ok {
				name = []byte(v)
			}
		}
		for k, key := range keys {
			if string(name) == key {
				out[k] = span{vs, ve}
				break
			}
		}
		i = skipSpace(data, ve)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	if i >= len(data) {
		return -1
	}
	return i + 1
}
