package termsafe

import (
	"bytes"
	"testing"
)

func TestWriterAndString(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"plain text\n\twith tab", "plain text\n\twith tab"},
		{"x\x1b[2J\x1b]0;title\x07", "x·[2J·]0;title·"},
		{"é☃ \r\x00\x7f", "é☃ ···"},
		{"", ""},
		// C1 controls in UTF-8 (CSI U+009B, NEL U+0085, U+0080, U+009F);
		// U+00A0 and é (C3 A9) and ☃ (E2 98 83: a C1-like byte after
		// another lead) stay.
		{"a\u009b2Jb\u0085\u0080\u009f", "a·2Jb···"},
		{"\u00a0é☃\u00b7", "\u00a0é☃·"},
		// Bytes 0x80 to 0x9F outside a valid UTF-8 sequence: alone, after
		// a lead byte that does not take them (E0 wants A0 to BF), in a
		// sequence broken off or cut at the end. Continuation bytes of
		// valid sequences (😀 is F0 9F 98 80) and lone bytes above 0x9F
		// stay.
		{"a\x9b2Jb\x85\x80\x9f", "a·2Jb···"},
		{"\xe2\x9b2J\xe0\x9b", "\xe2·2J\xe0·"},
		{"\xf0\x9f\x98x", "\xf0··x"},
		{"x\xe2\x98", "x\xe2·"},
		{"😀\xa0\xc0\xff\xe2\xa0", "😀\xa0\xc0\xff\xe2\xa0"},
	}
	for _, tc := range tests {
		var b bytes.Buffer
		w := NewWriter(&b)
		// Byte by byte and whole: the result is the same.
		for i := 0; i < len(tc.in); i++ {
			if n, err := w.Write([]byte{tc.in[i]}); err != nil || n != 1 {
				t.Fatalf("Write: %d, %v", n, err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if n, err := w.Write([]byte(tc.in)); err != nil || n != len(tc.in) {
			t.Fatalf("Write: %d, %v", n, err)
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if got := b.String(); got != tc.want+tc.want {
			t.Errorf("Writer(%q) wrote %q, want %q twice", tc.in, got, tc.want)
		}
		// Split at every place: the result is the same.
		for i := 0; i <= len(tc.in); i++ {
			var s bytes.Buffer
			w := NewWriter(&s)
			w.Write([]byte(tc.in[:i]))
			w.Write([]byte(tc.in[i:]))
			w.Flush()
			if s.String() != tc.want {
				t.Errorf("Writer(%q split at %d) wrote %q, want %q", tc.in, i, s.String(), tc.want)
			}
		}
		if got := String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
