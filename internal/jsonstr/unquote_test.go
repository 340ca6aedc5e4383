package jsonstr

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// TestUnicodeEscape decodes \u escapes, alone and in pairs, and compares
// the rune with what encoding/json makes of the same escape.
func TestUnicodeEscape(t *testing.T) {
	tests := []struct {
		in string
		n  int
		ok bool
	}{
		{`\u0041`, 6, true},
		{`\u00e9rest`, 6, true},
		{`\ud83d\ude00`, 12, true}, // a pair
		{`\ud83d`, 6, true},        // lone high: U+FFFD
		{`\ude00\ud83d`, 6, true},  // lone low first
		{`\ud83d\u0041`, 6, true},  // high, then no low
		{`\ud83dx\ude00`, 6, true}, // high, then not an escape
		{`\ud83d\ude0`, 6, true},   // the low one cut short
		{`\uDBFF\uDFFF`, 12, true}, // capitals, the last pair
		{`\u12`, 0, false},         // cut short
		{`\u12g4`, 0, false},       // not hex
	}
	for _, tt := range tests {
		r, n, ok := UnicodeEscape([]byte(tt.in), 0)
		if n != tt.n || ok != tt.ok {
			t.Errorf("UnicodeEscape(%s) = %U, %d, %v; want n %d, ok %v", tt.in, r, n, ok, tt.n, tt.ok)
			continue
		}
		if !ok {
			continue
		}
		var want string
		if err := json.Unmarshal([]byte(`"`+tt.in[:n]+`"`), &want); err != nil {
			t.Fatal(err)
		}
		if got := string(utf8.AppendRune(nil, r)); got != want {
			t.Errorf("UnicodeEscape(%s) = %q, encoding/json gives %q", tt.in, got, want)
		}
	}
}

func TestUnescapeChar(t *testing.T) {
	for c := range 256 {
		got, ok := UnescapeChar(byte(c))
		var want string
		err := json.Unmarshal([]byte(`"\`+string(rune(c))+`"`), &want)
		if c == 'u' {
			if ok {
				t.Errorf("UnescapeChar('u') = %q, true; \\u is UnicodeEscape's", got)
			}
			continue
		}
		if ok != (err == nil) || ok && string(got) != want {
			t.Errorf("UnescapeChar(%q) = %q, %v; encoding/json: %q, %v", byte(c), got, ok, want, err)
		}
	}
}
