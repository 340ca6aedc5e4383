package capture

import (
	"encoding/binary"
	"fmt"
)

// The WebSocket framing of RFC 6455 §5.2, as the recorder reads it: it
// forwards the bytes as they came and parses the same bytes for the tape.
//
//	 0               1               2               3
//	+-+-+-+-+-------+-+-------------+-------------------------------+
//	|F|R|R|R| opcode|M| payload len |  extended payload length      |
//	|I|S|S|S|  (4)  |A|     (7)     |  (16 bits if len = 126,       |
//	|N|V|V|V|       |S|             |   64 bits if len = 127)       |
//	+-+-+-+-+-------+-+-------------+-------------------------------+
//	| masking key (4 bytes, present when MASK is set)               |
//	+---------------------------------------------------------------+
//	| payload (XORed with the key, byte i with key[i % 4])          |
//	+---------------------------------------------------------------+

// The opcodes of RFC 6455 §5.2.
const (
	wsOpContinuation = 0x0
	wsOpText         = 0x1
	wsOpBinary       = 0x2
	wsOpClose        = 0x8
	wsOpPing         = 0x9
	wsOpPong         = 0xA
)

// Close codes of RFC 6455 §7.4.1 the recorder uses.
const (
	wsCloseGoingAway  = 1001
	wsCloseProtocol   = 1002
	wsCloseNoStatus   = 1005 // what a close frame without a code means (never sent)
	wsCloseTooBig     = 1009
	wsCloseBadGateway = 1014
)

// wsMaxHeader is the longest frame header: 2 bytes, 8 of length, 4 of key.
const wsMaxHeader = 14

// wsMaxControl is the largest payload of a control frame.
const wsMaxControl = 125

// wsItem is what a wsParser found complete: a whole message (text or
// binary, reassembled from its fragments) or a control frame.
type wsItem struct {
	op   byte   // wsOpText, wsOpBinary, wsOpClose, wsOpPing or wsOpPong
	data []byte // the payload, unmasked; valid until the parser's next feed
}

// wsFrameError is a frame a wsParser refuses: what is wrong and where.
type wsFrameError struct {
	from   string // "client" or "server"
	frame  int64  // the frame's number in its stream, from 1
	at     int64  // the offset of its first byte in the stream (after the handshake)
	what   string
	tooBig bool // the message is larger than the limit (status 1009, not 1002)
}

func (e *wsFrameError) Error() string {
	return fmt.Sprintf("websocket: %s frame %d at byte %d: %s", e.from, e.frame, e.at, e.what)
}

// wsParser reads the frames of one direction of a WebSocket connection
// from the bytes fed to it, in pieces of any size. It keeps no header
// bytes of its own: feed consumes whole headers only, and the caller feeds
// an incomplete one again with the bytes that follow. Messages are
// reassembled from their fragments, client payloads unmasked into a copy
// (the bytes fed are never changed). The first frame that breaks the
// rules (or makes a message larger than max) stops it for good.
type wsParser struct {
	from string // "client": frames must be masked; "server": must not be
	max  int64  // the largest message

	// The frame being read.
	inFrame bool
	op      byte
	fin     bool
	masked  bool
	key     [4]byte
	phase   int   // payload bytes unmasked so far, modulo 4
	left    int64 // payload bytes still to come

	msgOp   byte   // the opcode of the message being reassembled; 0 when none
	msg     []byte // its payload so far
	msgHeld bool   // msg is in items: the next message needs a buffer of its own
	ctl     []byte // the payload so far of a control frame that spans feeds

	arena []byte   // unmasked payloads handed out in items
	items []wsItem // what the last feed found complete

	frames int64 // frames begun
	pos    int64 // stream offset of the next byte fed
	err    error
	closed bool // a close frame was seen
}

// newWSParser returns a parser of the frames the client (masked) or the
// server (unmasked) sends, refusing messages larger than max bytes.
func newWSParser(fromClient bool, max int64) *wsParser {
	from := "server"
	if fromClient {
		from = "client"
	}
	return &wsParser{from: from, max: max, ctl: make([]byte, 0, wsMaxControl)}
}

// feed parses the frames in b, which starts where the previous feed's
// consumed bytes ended. It returns how many bytes of b it consumed: all of
// b but an incomplete header at its end, or, on an error, the bytes before
// the frame refused. The items found complete are in p.items, valid until
// the next feed.
func (p *wsParser) feed(b []byte) (int, error) {
	p.items, p.arena, p.msgHeld = p.items[:0], p.arena[:0], false
	if p.msgOp == 0 && cap(p.msg) > wsKeepBuffer {
		p.msg = nil // a big message's buffer is not held on to
	}
	if p.err != nil {
		return 0, p.err
	}
	i := 0
	for i < len(b) {
		if !p.inFrame {
			n, err := p.header(b[i:], p.pos+int64(i))
			if err != nil {
				p.err = err
				p.pos += int64(i)
				return i, err
			}
			if n == 0 {
				break // an incomplete header: fed again with what follows
			}
			if p.left <= int64(len(b)-i-n) && p.wholeFrame() {
				// The frame is all in b and is a message or a control
				// frame by itself: no reassembly, no copy unless masked.
				end := i + n + int(p.left)
				p.emit(p.op, p.unmasked(b[i+n:end]))
				p.inFrame, p.left = false, 0
				i = end
				continue
			}
			i += n
			p.begin()
			if p.left == 0 {
				p.endFrame()
				continue
			}
		}
		k := int(min(int64(len(b)-i), p.left))
		p.payload(b[i : i+k])
		i += k
		if p.left -= int64(k); p.left == 0 {
			p.endFrame()
		}
	}
	p.pos += int64(i)
	return i, nil
}

// wholeFrame reports whether the frame just begun is a whole message or
// a control frame.
func (p *wsParser) wholeFrame() bool {
	return p.op >= wsOpClose || (p.fin && p.op != wsOpContinuation)
}

// header parses the frame header at the start of b, at stream offset at.
// It returns its length, or 0 when b holds only part of it.
func (p *wsParser) header(b []byte, at int64) (int, error) {
	if len(b) < 2 {
		return 0, nil
	}
	n := 2
	switch b[1] & 0x7f {
	case 126:
		n += 2
	case 127:
		n += 8
	}
	masked := b[1]&0x80 != 0
	if masked {
		n += 4
	}
	if len(b) < n {
		return 0, nil
	}
	p.frames++
	fail := func(tooBig bool, format string, args ...any) (int, error) {
		return 0, &wsFrameError{from: p.from, frame: p.frames, at: at, what: fmt.Sprintf(format, args...), tooBig: tooBig}
	}
	plen := int64(b[1] & 0x7f)
	switch plen {
	case 126:
		plen = int64(binary.BigEndian.Uint16(b[2:]))
	case 127:
		u := binary.BigEndian.Uint64(b[2:])
		if u>>63 != 0 {
			return fail(false, "payload length %#x has its most significant bit set", u)
		}
		plen = int64(u)
	}
	op, fin := b[0]&0x0f, b[0]&0x80 != 0
	control := op >= wsOpClose
	sofar := int64(0) // the message's bytes before this frame
	if op == wsOpContinuation {
		sofar = int64(len(p.msg))
	}
	switch {
	case b[0]&0x70 != 0:
		return fail(false, "reserved bits %#02x set, but no extension was negotiated", b[0]&0x70)
	case op > wsOpBinary && op < wsOpClose || op > wsOpPong:
		return fail(false, "unknown opcode %#x", op)
	case control && !fin:
		return fail(false, "fragmented control frame (opcode %#x)", op)
	case control && plen > wsMaxControl:
		return fail(false, "control frame of %d bytes (at most %d)", plen, wsMaxControl)
	case op == wsOpContinuation && p.msgOp == 0:
		return fail(false, "continuation frame with no message to continue")
	case (op == wsOpText || op == wsOpBinary) && p.msgOp != 0:
		return fail(false, "new message (opcode %#x) before the fragmented one ended", op)
	case masked && p.from == "server":
		return fail(false, "masked frame (a server must not mask)")
	case !masked && p.from == "client":
		return fail(false, "unmasked frame (a client must mask)")
	case !control && sofar+plen > p.max:
		return fail(true, "message of at least %d bytes, larger than the limit of %d", sofar+plen, p.max)
	}
	p.inFrame, p.op, p.fin, p.masked, p.phase, p.left = true, op, fin, masked, 0, plen
	if masked {
		copy(p.key[:], b[n-4:n])
	}
	return n, nil
}

// begin starts reading a frame that is not whole in one feed.
func (p *wsParser) begin() {
	switch {
	case p.op >= wsOpClose:
		p.ctl = p.ctl[:0]
	case p.op != wsOpContinuation:
		if p.msgHeld {
			p.msg, p.msgHeld = nil, false // the one in items stays as it is
		}
		p.msgOp, p.msg = p.op, p.msg[:0]
	}
}

// payload takes in b, the next payload bytes of a frame that is not whole
// in one feed.
func (p *wsParser) payload(b []byte) {
	if p.op >= wsOpClose {
		p.ctl = p.appendUnmasked(p.ctl, b)
	} else {
		p.msg = p.appendUnmasked(p.msg, b)
	}
}

// endFrame ends a frame read over several feeds.
func (p *wsParser) endFrame() {
	p.inFrame = false
	switch {
	case p.op >= wsOpClose:
		p.emit(p.op, p.toArena(p.ctl))
	case p.fin:
		p.emit(p.msgOp, p.msg)
		p.msgOp, p.msgHeld = 0, true
	}
}

// emit adds an item.
func (p *wsParser) emit(op byte, data []byte) {
	if op == wsOpClose {
		p.closed = true
	}
	p.items = append(p.items, wsItem{op: op, data: data})
}

// unmasked returns the payload b of a whole frame, unmasked: b itself
// when the frame is not masked, an unmasked copy otherwise.
func (p *wsParser) unmasked(b []byte) []byte {
	if !p.masked {
		return b
	}
	c := p.toArena(b)
	wsMask(c, p.key, 0)
	return c
}

// toArena returns a copy of b in the arena: slices handed out before stay
// valid (a full arena is replaced, not grown).
func (p *wsParser) toArena(b []byte) []byte {
	if cap(p.arena)-len(p.arena) < len(b) {
		p.arena = make([]byte, 0, max(2*cap(p.arena), len(b), 512))
	}
	start := len(p.arena)
	p.arena = append(p.arena, b...)
	return p.arena[start:len(p.arena):len(p.arena)]
}

// appendUnmasked appends b to dst, unmasked when the frame is masked.
func (p *wsParser) appendUnmasked(dst, b []byte) []byte {
	start := len(dst)
	dst = append(dst, b...)
	if p.masked {
		p.phase = wsMask(dst[start:], p.key, p.phase)
	}
	return dst
}

// wsMask XORs b in place with key, starting at key[phase], and returns
// the phase after b (RFC 6455 §5.3). Masking and unmasking are the same.
func wsMask(b []byte, key [4]byte, phase int) int {
	var k [8]byte
	for i := range k {
		k[i] = key[(phase+i)&3]
	}
	k8 := binary.LittleEndian.Uint64(k[:])
	i := 0
	for ; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], binary.LittleEndian.Uint64(b[i:])^k8)
	}
	for ; i < len(b); i++ {
		b[i] ^= k[i&7]
	}
	return (phase + len(b)) & 3
}

// atBoundary reports whether the bytes consumed so far end with a whole
// frame: a frame of the proxy's own (a close) may follow them.
func (p *wsParser) atBoundary() bool { return !p.inFrame }

// wsAppendFrame appends a final frame with opcode op and payload to dst,
// masked with key when key is not nil.
func wsAppendFrame(dst []byte, op byte, payload []byte, key *[4]byte) []byte {
	b1 := byte(0)
	if key != nil {
		b1 = 0x80
	}
	n := len(payload)
	switch {
	case n < 126:
		dst = append(dst, 0x80|op, b1|byte(n))
	case n <= 0xffff:
		dst = append(dst, 0x80|op, b1|126)
		dst = binary.BigEndian.AppendUint16(dst, uint16(n))
	default:
		dst = append(dst, 0x80|op, b1|127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(n))
	}
	if key == nil {
		return append(dst, payload...)
	}
	dst = append(dst, key[:]...)
	start := len(dst)
	dst = append(dst, payload...)
	wsMask(dst[start:], *key, 0)
	return dst
}

// wsClosePayload is the payload of a close frame with code and reason,
// the reason cut to fit a control frame (at a rune boundary).
func wsClosePayload(code int, reason string) []byte {
	if len(reason) > wsMaxControl-2 {
		cut := wsMaxControl - 2
		for cut > 0 && reason[cut]&0xc0 == 0x80 {
			cut--
		}
		reason = reason[:cut]
	}
	return append(binary.BigEndian.AppendUint16(nil, uint16(code)), reason...)
}

// wsCloseOf returns the code and reason of a close frame's payload: code
// 1005 (no status) when it has none.
func wsCloseOf(payload []byte) (int, string) {
	if len(payload) < 2 {
		return wsCloseNoStatus, ""
	}
	return int(binary.BigEndian.Uint16(payload)), string(payload[2:])
}
