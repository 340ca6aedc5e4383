package tape

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/mcptape/mcptape/jsonrpc"
)

// This file is the Reader's fast path for offline analysis: NextShared
// fills a caller's Record without copying the frame, and parses the lines
// the Writer writes (keys in its fixed order, message frames embedded as
// JSON) by matching their known prefixes instead of walking keys. Any
// other line goes through the general parser, so both give the same
// Record for the same line.

// NextShared reads the next record into rec, overwriting every field, and
// returns io.EOF at the end of the tape like Next (see Warning), or the
// source's read error. It is Next for readers that look at a record once
// and drop it: it does not allocate for most records.
//
// Lifetime: rec.Frame and rec.Data may alias the Reader's decompressed
// bytes instead of being copies. They are read-only (a slice's capacity
// ends with it, so appending to it copies). The Reader never writes over
// bytes it handed out, unless the caller gave them back with
// ReleaseShared, so they stay valid and unchanged for as long as they are
// referenced; but a slice kept keeps its whole decompressed frame (about
// 1 MiB for the Writer's frames) in memory. Copy what you keep.
// Strings (Session, Stream, EventID, Event) are ordinary strings.
func (r *Reader) NextShared(rec *Record) error {
	for {
		line, err := r.line()
		if err != nil {
			return err
		}
		if r.p.parseFast(line, rec, false) {
			r.lines++
			r.shared = true
			r.n++
			return nil
		}
		if p, ok := r.parseLine(line); ok {
			*rec = *p
			r.n++
			return nil
		}
	}
}

// NextClassified is NextShared that also classifies a message's frame
// with jsonrpc.Classify into info (zeroed for other records). Classify
// validates the frame in its one pass, which spares the Reader the pass it
// otherwise makes to find where an embedded frame ends: when the frame
// turns out not to be one valid JSON value, the line is parsed again by
// the general parser. The lifetime rules of NextShared apply to rec, and
// to info's slices (they alias rec.Frame).
func (r *Reader) NextClassified(rec *Record, info *jsonrpc.Info) error {
	_, err := r.nextClassified(rec, info, nil, false)
	return err
}

// NextClassifiedMembers is NextClassified with jsonrpc.ClassifyMembers: it
// also returns the members of the message's params or result object,
// appended to dst[:0] (empty for other records). Reusing the returned
// slice as the next dst avoids allocating.
func (r *Reader) NextClassifiedMembers(rec *Record, info *jsonrpc.Info, dst []jsonrpc.Member) ([]jsonrpc.Member, error) {
	return r.nextClassified(rec, info, dst, true)
}

func (r *Reader) nextClassified(rec *Record, info *jsonrpc.Info, dst []jsonrpc.Member, list bool) ([]jsonrpc.Member, error) {
	for {
		line, err := r.line()
		if err != nil {
			return dst[:0], err
		}
		if r.p.parseFast(line, rec, true) {
			if dst = classifyFrame(rec.Frame, info, dst, list); info.Kind != jsonrpc.KindInvalid {
				r.lines++
				r.shared = true
				r.n++
				return dst, nil
			}
		}
		p, ok := r.parseLine(line)
		if !ok {
			continue
		}
		*rec, *info, dst = *p, jsonrpc.Info{}, dst[:0]
		if rec.Type == TypeMessage {
			dst = classifyFrame(rec.Frame, info, dst, list)
		}
		r.n++
		return dst, nil
	}
}

// classifyFrame sets info to frame's classification, listing its members into
// dst[:0] when list is set.
func classifyFrame(frame []byte, info *jsonrpc.Info, dst []jsonrpc.Member, list bool) []jsonrpc.Member {
	if list {
		return jsonrpc.ClassifyMembers(frame, info, dst)
	}
	*info = jsonrpc.Classify(frame)
	return dst
}

// Prefixes of the records the Writer writes, in its key order.
var (
	prefixMessage  = []byte(`{"type":"message","time":`)
	prefixSession  = []byte(`,"session":"`)
	prefixDir      = []byte(`,"dir":"`)
	prefixExchange = []byte(`,"exchange":`)
	prefixStream   = []byte(`,"stream":"`)
	prefixEventID  = []byte(`,"event_id":"`)
	prefixNoEOL    = []byte(`,"noeol":true`)
	prefixFrame    = []byte(`,"frame":`)
)

// parseFast parses a message line in the Writer's form into rec:
//
//	{"type":"message","time":N,"session":"S","dir":"c2s"[,"exchange":N][,"stream":"S"][,"event_id":"S"][,"noeol":true],"frame":{...}}
//
// with no whitespace and no escapes in the strings. It reports false,
// leaving rec in any state, for any other line: the caller then uses the
// general parser, which accepts everything this does with the same result.
// The frame aliases line.
//
// With trustEnd, the frame is taken to end just before the line's last
// '}' without looking inside it: the caller must then check that the
// frame is one valid JSON value (jsonrpc.Classify does), and parse the
// line again with the general parser when it is not.
func (p *lineParser) parseFast(line []byte, rec *Record, trustEnd bool) bool {
	if !bytes.HasPrefix(line, prefixMessage) {
		return false
	}
	i := len(prefixMessage)
	t, i, ok := digits(line, i)
	if !ok || t == 0 {
		return false
	}
	*rec = Record{Type: TypeMessage, Time: int64(t)}
	var s []byte
	if !bytes.HasPrefix(line[i:], prefixSession) {
		return false
	}
	if s, i, ok = plainString(line, i+len(prefixSession)); !ok || len(s) == 0 {
		return false
	}
	rec.Session = p.internStr(s)
	if !bytes.HasPrefix(line[i:], prefixDir) || len(line) < i+len(prefixDir)+4 {
		return false
	}
	i += len(prefixDir)
	switch string(line[i : i+4]) {
	case `c2s"`:
		rec.Dir = ClientToServer
	case `s2c"`:
		rec.Dir = ServerToClient
	default:
		return false
	}
	i += 4
	// Optional keys, told apart by their first letter before the whole
	// prefix is compared.
	if keyStarts(line, i, 'e') && bytes.HasPrefix(line[i:], prefixExchange) {
		var n uint64
		if n, i, ok = digits(line, i+len(prefixExchange)); !ok || n == 0 {
			return false
		}
		rec.Exchange = n
	}
	if keyStarts(line, i, 's') && bytes.HasPrefix(line[i:], prefixStream) {
		if s, i, ok = plainString(line, i+len(prefixStream)); !ok || len(s) == 0 {
			return false
		}
		rec.Stream = p.internStr(s)
	}
	if keyStarts(line, i, 'e') && bytes.HasPrefix(line[i:], prefixEventID) {
		if s, i, ok = plainString(line, i+len(prefixEventID)); !ok || len(s) == 0 {
			return false
		}
		rec.EventID = string(s)
	}
	if keyStarts(line, i, 'n') && bytes.HasPrefix(line[i:], prefixNoEOL) {
		rec.NoEOL, i = true, i+len(prefixNoEOL)
	}
	if !bytes.HasPrefix(line[i:], prefixFrame) {
		return false
	}
	i += len(prefixFrame)
	if i >= len(line) || (line[i] != '{' && line[i] != '[') {
		return false
	}
	end := len(line) - 1
	if trustEnd {
		if end <= i || line[end] != '}' || (line[end-1] != '}' && line[end-1] != ']') {
			return false
		}
	} else if e, err := skipValue(line, i); err != nil || e != end || line[end] != '}' {
		return false
	}
	rec.Frame = line[i:end:end]
	return true
}

// keyStarts reports whether b[i:] starts with ',"' and a key whose first
// letter is c.
func keyStarts(b []byte, i int, c byte) bool {
	return i+2 < len(b) && b[i+2] == c
}

// digits parses the decimal digits at b[i] followed by a ',' (up to 19
// digits, and a value that fits an int64) and returns the index of the
// ','.
func digits(b []byte, i int) (uint64, int, bool) {
	var n uint64
	j := i
	for j+8 <= len(b) && j-i < 16 { // eight digits at a time (a time has 19)
		v, ok := eightDigits(b[j : j+8])
		if !ok {
			break
		}
		n = n*100_000_000 + v
		j += 8
	}
	for ; j < len(b) && isDigit(b[j]); j++ {
		n = n*10 + uint64(b[j]-'0')
	}
	if j == i || j-i > 19 || n > math.MaxInt64 || j >= len(b) || b[j] != ',' {
		return 0, i, false
	}
	return n, j, true
}

// eightDigits returns the value of the eight decimal digits in b, or false
// when b holds another byte. It works on the eight bytes as one word: the
// first digit is the lowest byte, and each step joins neighbouring numbers
// of the step before (digits, then pairs, then quadruples).
func eightDigits(b []byte) (uint64, bool) {
	const ones, high = 0x0101010101010101, 0xF0F0F0F0F0F0F0F0
	w := binary.LittleEndian.Uint64(b)
	if w&high != 0x30*ones || (w+0x06*ones)&high != 0x30*ones { // each byte in '0'..'9'
		return 0, false
	}
	v := w - 0x30*ones
	v = (v*10 + v>>8) & 0x00FF00FF00FF00FF
	v = (v*100 + v>>16) & 0x0000FFFF0000FFFF
	return (v*10000 + v>>32) & 0xFFFFFFFF, true
}

// shortString is how many bytes plainString looks at one by one.
const shortString = 16

// plainString returns the content of the string whose content starts at
// b[i] (after its opening quote) and the index after its closing quote,
// when the string holds no escape.
func plainString(b []byte, i int) ([]byte, int, bool) {
	// Byte by byte first: most strings here (session and stream names)
	// are short, and end sooner than IndexByte gets going.
	for j := i; j < len(b) && j < i+shortString; j++ {
		switch b[j] {
		case '"':
			return b[i:j], j + 1, true
		case '\\':
			return nil, i, false
		}
	}
	n := bytes.IndexByte(b[i:], '"')
	if n < 0 {
		return nil, i, false
	}
	s := b[i : i+n]
	if bytes.IndexByte(s, '\\') >= 0 {
		return nil, i, false
	}
	return s, i + n + 1, true
}
