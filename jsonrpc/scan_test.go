package jsonrpc

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

// TestStringEveryByteEveryPlace puts each byte value at each place of a
// string (key and value, short and longer than a word, with a second
// byte after it) and checks Classify against encoding/json, and the
// invalid-UTF-8 violation against utf8.Valid: the word-at-a-time scan
// must flag exactly the bytes the byte-at-a-time rules flag.
func TestStringEveryByteEveryPlace(t *testing.T) {
	for _, n := range []int{1, 7, 8, 9, 16, 17} {
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

// refStr is str byte by byte, the plain reading of the JSON grammar: the
// position after the closing quote (or -1), whether an escape was seen,
// and whether the bytes between the quotes are invalid UTF-8.
func refStr(b []byte, i int) (end int, esc, badUTF8 bool) {
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1, esc, !utf8.Valid(b[i+1 : j])
		case c == '\\':
			esc = true
			if j+1 >= len(b) {
				return -1, esc, false
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
			case 'u':
				if j+6 > len(b) {
					return -1, esc, false
				}
				for _, h := range b[j+2 : j+6] {
					if unhex(h) < 0 {
						return -1, esc, false
					}
				}
				j += 5
			default:
				return -1, esc, false
			}
		case c < 0x20:
			return -1, esc, false
		}
	}
	return -1, esc, false
}

// TestStrMatchesBytewise: str (sixteen, then eight bytes at a time, in
// ASCII then mixed mode) ends where the byte-by-byte reading ends, with the
// same escape and UTF-8 verdicts, on random strings of every length up to
// a few words, drawn mostly from plain bytes with rare special ones so
// that hits fall at every place of a word.
func TestStrMatchesBytewise(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	special := []byte{'"', '\\', 0x00, 0x1f, 0x20, 0x21, 0x23, 0x5b, 0x5d, 0x7f, 0x80, 0xA9, 0xC3, 0xE2, 0xFF, 'u', '0'}
	for n := 0; n < 200000; n++ {
		size := rng.IntN(48)
		b := make([]byte, 1+size)
		b[0] = '"'
		rare := 1 + rng.IntN(24)
		for k := 1; k < len(b); k++ {
			if rng.IntN(rare) == 0 {
				b[k] = special[rng.IntN(len(special))]
			} else {
				b[k] = byte('a' + rng.IntN(26))
			}
		}
		if n%2 == 0 {
			b = append(b, '"') // mostly terminated
		}
		wantEnd, wantEsc, wantBad := refStr(b, 0)
		s := scanner{b: b}
		end, esc := s.str(0)
		if end != wantEnd || end > 0 && (esc != wantEsc || s.badUTF8 != wantBad) {
			t.Fatalf("str(%q) = %d, escape %v, bad UTF-8 %v; byte by byte %d, %v, %v", b, end, esc, s.badUTF8, wantEnd, wantEsc, wantBad)
		}
	}
}
