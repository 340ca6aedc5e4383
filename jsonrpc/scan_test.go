package jsonrpc

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

// TestStringEveryByteEveryPlace puts each byte value at each place of a
// string (key and value, short and longer than a word, with a second
// byte after it) and checks Classify against encoding/json, and the
// invalid-UTF-8 violation against utf8.Valid: the word-at-a-time scan
// must flag exactly the bytes the byte-at-a-time rules flag.
func TestStringEveryByteEveryPlace(t *testing.T) {
	for _, n := range []int{1, 7, 8, 9, 17} {
		for p := 0; p < n; p++ {
			for c := 0; c < 256; c++ {
				for _, after := range []byte{'a', '"', '\\', 0x01, 0xC3, 0xA9} {
					str := bytes.Repeat([]byte{'a'}, n)
					str[p] = byte(c)
					if p+1 < n {
						str[p+1] = after
					}
					value := append(append([]byte(`{"jsonrpc":"2.0","method":"m","params":{"k":"`), str...), `"}}`...)
					key := append(append([]byte(`{"jsonrpc":"2.0","method":"m","params":{"`), str...), `":1}}`...)
					for _, frame := range [][]byte{value, key} {
						crossCheck(t, frame)
						info := Classify(frame)
						if info.Kind == KindInvalid {
							continue
						}
						if bad := info.Violations.Has(ViolationInvalidUTF8); bad == utf8.Valid(frame) {
							t.Fatalf("Classify(%q): invalid-utf8 %v, utf8.Valid %v", frame, bad, utf8.Valid(frame))
						}
					}
				}
			}
		}
	}
}

// TestShortStrAgreesWithStr: wherever shortStr scans a string, str scans
// it to the same end, finding no escape and no invalid UTF-8; and it
// declines every string longer than eight bytes.
func TestShortStrAgreesWithStr(t *testing.T) {
	alphabet := []byte{'a', '"', '\\', 0x01, 0x1f, ' ', 0x7f, 0x80, 0xC3, 0xA9, 'n'}
	var walk func(prefix []byte)
	walk = func(prefix []byte) {
		for tail := 0; tail <= 12; tail += 3 {
			b := append(append([]byte{'"'}, prefix...), bytes.Repeat([]byte{'"'}, tail)...)
			s := scanner{b: b}
			end, ok := s.shortStr(0)
			if !ok {
				continue
			}
			ref := scanner{b: b}
			want, esc := ref.str(0)
			if end != want || esc || ref.badUTF8 || ref.failed() || end > 10 {
				t.Fatalf("shortStr(%q) = %d; str gives %d, escape %v, bad UTF-8 %v, failed %v", b, end, want, esc, ref.badUTF8, ref.failed())
			}
		}
		if len(prefix) == 5 {
			return
		}
		for _, c := range alphabet {
			walk(append(prefix, c))
		}
	}
	walk(nil)
	for n := 0; n <= 12; n++ {
		b := append(append([]byte{'"'}, bytes.Repeat([]byte{'a'}, n)...), `"xxxxxxxxxx`...)
		s := scanner{b: b}
		end, ok := s.shortStr(0)
		if ok != (n <= 8) || ok && end != n+2 {
			t.Errorf("shortStr of %d plain bytes = %d, %v", n, end, ok)
		}
	}
}
