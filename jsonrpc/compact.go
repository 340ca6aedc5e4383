package jsonrpc

import "encoding/binary"

// Shortcuts of message (classify.go) for what most frames look like:
// compact JSON that starts with the version and goes on with a few known
// keys. Whatever does not match exactly goes the general way.

// versionPrefix is how most frames start.
const versionPrefix = `{"jsonrpc":"2.0"`

// The top-level keys topKey knows, quoted, as little-endian words of their
// first eight bytes (the first byte lowest): `"id":` and its five bytes,
// `"error":` (eight), `"method"`, `"params"` and `"result"` (eight, then
// the ':').
const (
	wordID     = uint64('"') | uint64('i')<<8 | uint64('d')<<16 | uint64('"')<<24 | uint64(':')<<32
	wordError  = uint64('"') | uint64('e')<<8 | uint64('r')<<16 | uint64('r')<<24 | uint64('o')<<32 | uint64('r')<<40 | uint64('"')<<48 | uint64(':')<<56
	wordMethod = uint64('"') | uint64('m')<<8 | uint64('e')<<16 | uint64('t')<<24 | uint64('h')<<32 | uint64('o')<<40 | uint64('d')<<48 | uint64('"')<<56
	wordParams = uint64('"') | uint64('p')<<8 | uint64('a')<<16 | uint64('r')<<24 | uint64('a')<<32 | uint64('m')<<40 | uint64('s')<<48 | uint64('"')<<56
	wordResult = uint64('"') | uint64('r')<<8 | uint64('e')<<16 | uint64('s')<<24 | uint64('u')<<32 | uint64('l')<<40 | uint64('t')<<48 | uint64('"')<<56
)

// topKey recognizes at b[i] what most members of a message after the
// first are, written compactly: a ',', then "id", "method", "params",
// "result" or "error", the ':' and the first byte of the value. It
// returns the key's name and the position of its value; ok is false for
// anything else (the caller then reads the member with objIter.next,
// which is also the only one to read a first member: topKey wants a
// ',').
func (s *scanner) topKey(i int) (k keyName, v int, ok bool) {
	b := s.b
	if i+11 > len(b) || b[i] != ',' { // b[i+10] exists: a value after `,"method":`
		return 0, 0, false
	}
	w := binary.LittleEndian.Uint64(b[i+1 : i+9])
	switch {
	case w&(1<<40-1) == wordID:
		k, v = keyID, i+6
	case w == wordError:
		k, v = keyError, i+9
	case b[i+9] != ':':
		return 0, 0, false
	case w == wordMethod:
		k, v = keyMethod, i+10
	case w == wordParams:
		k, v = keyParams, i+10
	case w == wordResult:
		k, v = keyResult, i+10
	default:
		return 0, 0, false
	}
	if b[v] <= ' ' { // whitespace before the value: objIter.next skips it
		return 0, 0, false
	}
	return k, v, true
}
