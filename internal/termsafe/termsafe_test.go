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
		if n, err := w.Write([]byte(tc.in)); err != nil || n != len(tc.in) {
			t.Fatalf("Write: %d, %v", n, err)
		}
		if got := b.String(); got != tc.want+tc.want {
			t.Errorf("Writer(%q) wrote %q, want %q twice", tc.in, got, tc.want)
		}
		if got := String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
