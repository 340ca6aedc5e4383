package tape

import (
	"bytes"
	"encoding/binary"
	"io"
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
		if r.reorder != nil { // from the start, or from a segment of an older tape on
			p, err := r.nextReordered()
			if err == nil {
				*rec = *p
			}
			return err
		}
		line, err := r.line()
		if err == io.EOF {
			p, err := r.end()
			if err == nil {
				*rec = *p
				r.n++
			}
			return err
		}
		if err != nil {
			return err
		}
		if r.p.parseFast(line, rec, false) {
			r.segs.apply(rec)
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
		if r.reorder != nil { // from the start, or from a segment of an older tape on
			p, err := r.nextReordered()
			if err != nil {
				return dst[:0], err
			}
			return parsedClassified(p, rec, info, dst, list), nil
		}
		line, err := r.line()
		if err == io.EOF {
			p, err := r.end()
			if err != nil {
				return dst[:0], err
			}
			r.n++
			return parsedClassified(p, rec, info, dst, list), nil
		}
		if err != nil {
			return dst[:0], err
		}
		if r.p.parseFast(line, rec, true) {
			if dst = classifyFrame(rec.Frame, info, dst, list); info.Kind != jsonrpc.KindInvalid {
				r.segs.apply(rec)
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
		r.n++
		return parsedClassified(p, rec, info, dst, list), nil
	}
}

// parsedClassified copies the parsed record p into rec and classifies its
// frame into info (listing its members into dst[:0] when list is set).
func parsedClassified(p, rec *Record, info *jsonrpc.Info, dst []jsonrpc.Member, list bool) []jsonrpc.Member {
	*rec, *info, dst = *p, jsonrpc.Info{}, dst[:0]
	if rec.Type == TypeMessage {
		dst = classifyFrame(rec.Frame, info, dst, list)
	}
	return dst
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

// Prefixes of the records the Writer writes, in its key order. They are
// constants so that comparing a line with one compiles to a few word
// compares (for at most 16 bytes; prefixMessage is compared in two parts)
// instead of a call to the runtime.
const (
	prefixMessage  = prefixMessage1 + prefixMessage2
	prefixMessage1 = `{"type":"message`
	prefixMessage2 = `","time":`
	prefixSession  = `,"session":"`
	prefixDir      = `,"dir":"`
	prefixExchange = `,"exchange":`
	prefixStream   = `,"stream":"`
	prefixEventID  = `,"event_id":"`
	prefixNoEOL    = `,"noeol":true`
	prefixFrame    = `,"frame":`
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
	if len(line) < len(prefixMessage) || string(line[:len(prefixMessage1)]) != prefixMessage1 ||
		string(line[len(prefixMessage1):len(prefixMessage)]) != prefixMessage2 {
		return false
	}
	i := len(prefixMessage)
	t, i, ok := digits(line, i)
	if !ok || t == 0 {
		return false
	}
	*rec = Record{Type: TypeMessage, Time: int64(t)}
	var s []byte
	if len(line)-i < len(prefixSession) || string(line[i:i+len(prefixSession)]) != prefixSession {
		return false
	}
	if s, i, ok = plainString(line, i+len(prefixSession)); !ok || len(s) == 0 {
		return false
	}
	rec.Session = p.internStr(s)
	if len(line)-i < len(prefixDir)+4 || string(line[i:i+len(prefixDir)]) != prefixDir {
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
	if keyStarts(line, i, 'e') && len(line)-i >= len(prefixExchange) && string(line[i:i+len(prefixExchange)]) == prefixExchange {
		var n uint64
		if n, i, ok = digits(line, i+len(prefixExchange)); !ok || n == 0 {
			return false
		}
		rec.Exchange = n
	}
	if keyStarts(line, i, 's') && len(line)-i >= len(prefixStream) && string(line[i:i+len(prefixStream)]) == prefixStream {
		if s, i, ok = plainString(line, i+len(prefixStream)); !ok || len(s) == 0 {
			return false
		}
		rec.Stream = p.internStr(s)
	}
	if keyStarts(line, i, 'e') && len(line)-i >= len(prefixEventID) && string(line[i:i+len(prefixEventID)]) == prefixEventID {
		if s, i, ok = plainString(line, i+len(prefixEventID)); !ok || len(s) == 0 {
			return false
		}
		rec.EventID = string(s)
	}
	if keyStarts(line, i, 'n') && len(line)-i >= len(prefixNoEOL) && string(line[i:i+len(prefixNoEOL)]) == prefixNoEOL {
		rec.NoEOL, i = true, i+len(prefixNoEOL)
	}
	if len(line)-i < len(prefixFrame) || string(line[i:i+len(prefixFrame)]) != prefixFrame {
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
// ','. A time (19 digits) takes a path of its own, with no loop
// and two words of eight digits checked and converted side by side;
// anything else goes to anyDigits.
func digits(b []byte, i int) (uint64, int, bool) {
	if len(b)-i >= 20 {
		t := b[i : i+20 : i+20] // one bounds check for all the reads below
		w1 := binary.LittleEndian.Uint64(t[0:8]) - 0x30*lsb
		w2 := binary.LittleEndian.Uint64(t[8:16]) - 0x30*lsb
		d0, d1, d2 := t[16]-'0', t[17]-'0', t[18]-'0'
		// Each byte of w1 and w2 is now 0..9 exactly when no byte gets its
		// top bit set, as is or plus 0x76: the lowest byte that is not a
		// digit always does (a byte below '0' wraps to 0xD0 or more, one
		// above '9' reaches 0x80 with 0x76 added), whatever carries and
		// borrows do to the bytes above it.
		if (w1|(w1+0x76*lsb)|w2|(w2+0x76*lsb))&msb == 0 && d0 <= 9 && d1 <= 9 && d2 <= 9 && t[19] == ',' {
			// At most 10^19-1: no uint64 overflow.
			n := (digitsValue(w1)*100_000_000+digitsValue(w2))*1000 + uint64(d0)*100 + uint64(d1)*10 + uint64(d2)
			if n > math.MaxInt64 {
				return 0, i, false
			}
			return n, i + 19, true
		}
	}
	return anyDigits(b, i)
}

// lsb and msb have the lowest and the highest bit of each byte set.
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// digitsValue returns the value of the eight decimal digits whose values
// (0..9) are the bytes of w, the first digit lowest. Each step joins
// neighbouring numbers of the step before (digits, then pairs, then
// quadruples).
func digitsValue(w uint64) uint64 {
	w = (w*10 + w>>8) & 0x00FF00FF00FF00FF
	w = (w*100 + w>>16) & 0x0000FFFF0000FFFF
	return (w*10000 + w>>32) & 0xFFFFFFFF
}

// anyDigits is digits for any number of digits.
func anyDigits(b []byte, i int) (uint64, int, bool) {
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
	return digitsValue(w - 0x30*ones), true
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
