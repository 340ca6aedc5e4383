package capture

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// wsTestKey is the masking key of the tests' client frames.
var wsTestKey = &[4]byte{0x37, 0xfa, 0x21, 0x3d}

// rawFrame builds one frame by hand: b0 is the first byte (FIN, RSV,
// opcode), masked with wsTestKey when key, with a 64-bit length when
// long (to test the longest header).
func rawFrame(b0 byte, payload string, key, long bool) []byte {
	b1 := byte(0)
	if key {
		b1 = 0x80
	}
	var out []byte
	switch n := len(payload); {
	case long:
		out = binary.BigEndian.AppendUint64([]byte{b0, b1 | 127}, uint64(n))
	case n < 126:
		out = []byte{b0, b1 | byte(n)}
	default:
		out = binary.BigEndian.AppendUint16([]byte{b0, b1 | 126}, uint16(n))
	}
	if !key {
		return append(out, payload...)
	}
	out = append(out, wsTestKey[:]...)
	start := len(out)
	out = append(out, payload...)
	for i := start; i < len(out); i++ {
		out[i] ^= wsTestKey[(i-start)%4] // byte by byte, unlike wsMask
	}
	return out
}

// parsed is what a stream of frames parses into, fed as the relay feeds it.
type parsed struct {
	Items    []string // "text:hello", "close:1000:bye"...
	Consumed int      // bytes consumed (forwarded by the relay)
	Err      string
	Boundary bool
}

// parseStream feeds stream to a parser in reads of chunk bytes at most
// (all of it at once when chunk is 0), keeping what a feed did not
// consume in front of the next read, as the relay's pump does.
func parseStream(stream []byte, fromClient bool, max int64, chunk int) parsed {
	p := newWSParser(fromClient, max)
	var out parsed
	var pending []byte
	for len(stream) > 0 || len(pending) > 0 {
		k := len(stream)
		if chunk > 0 {
			k = min(k, chunk)
		}
		buf := append(pending, stream[:k]...)
		stream = stream[k:]
		used, err := p.feed(buf)
		out.Consumed += used
		for _, it := range p.items {
			out.Items = append(out.Items, itemString(it))
		}
		if err != nil {
			out.Err = err.Error()
			break
		}
		pending = append([]byte(nil), buf[used:]...)
		if k == 0 {
			break // an incomplete header at the end
		}
	}
	out.Boundary = p.atBoundary()
	return out
}

// itemString shows an item.
func itemString(it wsItem) string {
	switch it.op {
	case wsOpText:
		return "text:" + string(it.data)
	case wsOpBinary:
		return fmt.Sprintf("binary:%x", it.data)
	case wsOpClose:
		code, reason := wsCloseOf(it.data)
		return fmt.Sprintf("close:%d:%s", code, reason)
	case wsOpPing:
		return "ping:" + string(it.data)
	case wsOpPong:
		return "pong:" + string(it.data)
	}
	return fmt.Sprintf("op%d", it.op)
}

func cat(frames ...[]byte) []byte { return bytes.Join(frames, nil) }

func TestWSParser(t *testing.T) {
	big := strings.Repeat("x", 70000)
	mid := strings.Repeat("m", 300)
	closeBye := string(wsClosePayload(1000, "bye"))
	tests := []struct {
		name   string
		client bool
		stream []byte
		max    int64
		want   []string
		err    string // part of the error
	}{
		{"server text", false, rawFrame(0x81, "hello", false, false), 0, []string{"text:hello"}, ""},
		{"client text unmasked for the tape", true, rawFrame(0x81, "hello", true, false), 0, []string{"text:hello"}, ""},
		{"16-bit length", true, rawFrame(0x81, mid, true, false), 0, []string{"text:" + mid}, ""},
		{"64-bit length", false, rawFrame(0x81, big, false, true), 0, []string{"text:" + big}, ""},
		{"empty text", false, rawFrame(0x81, "", false, false), 0, []string{"text:"}, ""},
		{"fragments with a ping between", true, cat(rawFrame(0x01, "hel", true, false), rawFrame(0x89, "p", true, false),
			rawFrame(0x00, "", true, false), rawFrame(0x80, "lo", true, true)), 0, []string{"ping:p", "text:hello"}, ""},
		{"binary", false, rawFrame(0x82, "\x00\x01", false, false), 0, []string{"binary:0001"}, ""},
		{"pong and close", true, cat(rawFrame(0x8a, "q", true, false), rawFrame(0x88, closeBye, true, false)), 0,
			[]string{"pong:q", "close:1000:bye"}, ""},
		{"close without a code", false, rawFrame(0x88, "", false, false), 0, []string{"close:1005:"}, ""},
		{"two messages, then a bad frame", false, cat(rawFrame(0x81, "a", false, false), rawFrame(0x81, "b", false, false),
			rawFrame(0xc1, "c", false, false)), 0, []string{"text:a", "text:b"}, "server frame 3 at byte 6: reserved bits 0x40 set"},
		{"unknown opcode", false, rawFrame(0x83, "", false, false), 0, nil, "server frame 1 at byte 0: unknown opcode 0x3"},
		{"fragmented control", false, rawFrame(0x09, "", false, false), 0, nil, "fragmented control frame"},
		{"long control", false, rawFrame(0x89, mid, false, false), 0, nil, "control frame of 300 bytes (at most 125)"},
		{"lone continuation", false, rawFrame(0x80, "x", false, false), 0, nil, "continuation frame with no message"},
		{"new message inside one", false, cat(rawFrame(0x01, "x", false, false), rawFrame(0x81, "y", false, false)), 0, nil,
			"server frame 2 at byte 3: new message (opcode 0x1) before the fragmented one ended"},
		{"unmasked client frame", true, rawFrame(0x81, "x", false, false), 0, nil, "client frame 1 at byte 0: unmasked frame"},
		{"masked server frame", false, rawFrame(0x81, "x", true, false), 0, nil, "masked frame (a server must not mask)"},
		{"length's top bit", false, append([]byte{0x81, 127, 0x80}, make([]byte, 7)...), 0, nil, "most significant bit set"},
		{"too big", false, rawFrame(0x81, "12345678901", false, false), 10, nil, "message of at least 11 bytes, larger than the limit of 10"},
		{"too big over fragments", true, cat(rawFrame(0x01, "123456", true, false), rawFrame(0x80, "78901", true, false)), 10, nil,
			"client frame 2 at byte 12: message of at least 11 bytes"},
		{"big enough", true, cat(rawFrame(0x01, "12345", true, false), rawFrame(0x80, "67890", true, false)), 10, []string{"text:1234567890"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			max := tt.max
			if max == 0 {
				max = 1 << 20
			}
			whole := parseStream(tt.stream, tt.client, max, 0)
			if !reflect.DeepEqual(whole.Items, tt.want) {
				t.Errorf("items %.200q, want %.200q", whole.Items, tt.want)
			}
			if tt.err == "" && (whole.Err != "" || whole.Consumed != len(tt.stream) || !whole.Boundary) {
				t.Errorf("error %q, consumed %d of %d, at a boundary %v", whole.Err, whole.Consumed, len(tt.stream), whole.Boundary)
			}
			if tt.err != "" && !strings.Contains(whole.Err, tt.err) {
				t.Errorf("error %q, want %q", whole.Err, tt.err)
			}
			for _, chunk := range []int{1, 2, 3, 7, 100} {
				if got := parseStream(tt.stream, tt.client, max, chunk); !reflect.DeepEqual(got, whole) {
					t.Errorf("in reads of %d bytes: %+v, want what one read gives", chunk, got)
				}
			}
		})
	}
}

// TestWSParserHoldsHeaders checks that a header cut by the end of a read
// is not consumed (the relay forwards it with the rest of its frame), and
// that payload bytes are, as they come.
func TestWSParserHoldsHeaders(t *testing.T) {
	f := rawFrame(0x81, strings.Repeat("z", 300), true, false) // 8-byte header
	p := newWSParser(true, 1<<20)
	for cut := range 8 {
		if n, err := p.feed(f[:cut]); n != 0 || err != nil {
			t.Fatalf("header cut at %d: consumed %d, %v", cut, n, err)
		}
	}
	if n, err := p.feed(f[:20]); n != 20 || err != nil || p.atBoundary() || len(p.items) != 0 {
		t.Fatalf("header and 12 payload bytes: consumed %d, %v, boundary %v", n, err, p.atBoundary())
	}
	if n, err := p.feed(f[20:]); n != len(f)-20 || err != nil || !p.atBoundary() || len(p.items) != 1 {
		t.Fatalf("the rest: consumed %d, %v, %d items", n, err, len(p.items))
	}
}

func TestWSAppendFrame(t *testing.T) {
	for _, n := range []int{0, 125, 126, 65535, 65536} {
		payload := strings.Repeat("p", n)
		for _, masked := range []bool{false, true} {
			key := (*[4]byte)(nil)
			if masked {
				key = wsTestKey
			}
			f := wsAppendFrame(nil, wsOpText, []byte(payload), key)
			if !bytes.Equal(f, rawFrame(0x81, payload, masked, n > 65535)) {
				t.Errorf("%d bytes, masked %v: frame differs from the one built by hand", n, masked)
			}
		}
	}
	if got := wsClosePayload(1000, strings.Repeat("é", 100)); len(got) > wsMaxControl || got[len(got)-1] == 0xc3 {
		t.Errorf("close payload of %d bytes, cut inside a rune: %x", len(got), got[len(got)-2:])
	}
}

// FuzzWSFrames feeds any bytes to the frame parser, whole and in reads of
// every size, as client and as server frames: it must not panic, must
// consume only what it read, and must find the same items and error
// however the bytes are cut.
func FuzzWSFrames(f *testing.F) {
	f.Add(cat(rawFrame(0x01, "hel", true, false), rawFrame(0x89, "p", true, false), rawFrame(0x80, "lo", true, true)), uint8(3), true)
	f.Add(cat(rawFrame(0x81, `{"jsonrpc":"2.0","id":1}`, false, false), rawFrame(0x88, "\x03\xe8", false, false)), uint8(5), false)
	f.Add(rawFrame(0x82, strings.Repeat("b", 200), false, false), uint8(1), false)
	f.Add([]byte{0x81, 127, 0x80, 0, 0, 0, 0, 0, 0, 1}, uint8(2), false)
	f.Add([]byte{0x81, 0xfe, 0xff, 0xff, 1, 2, 3, 4}, uint8(4), true)
	f.Fuzz(func(t *testing.T, stream []byte, chunk uint8, client bool) {
		whole := parseStream(stream, client, 4096, 0)
		if whole.Consumed > len(stream) {
			t.Fatalf("consumed %d of %d bytes", whole.Consumed, len(stream))
		}
		if got := parseStream(stream, client, 4096, int(chunk)); !reflect.DeepEqual(got, whole) {
			t.Fatalf("in reads of %d bytes: %+v; in one read: %+v", chunk, got, whole)
		}
		if whole.Err != "" && strings.ContainsAny(whole.Err, "\n\r") {
			t.Fatalf("error of more than one line: %q", whole.Err)
		}
	})
}
