package jsonstr

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// plainRunBytes is PlainRun one byte at a time: the reference its
// word-at-a-time loop must agree with.
func plainRunBytes(b string, i int) int {
	for ; i < len(b); i++ {
		if c := b[i]; c < 0x20 || c == '"' || c == '\\' || c >= 0x80 {
			return i
		}
	}
	return i
}

// TestPlainRun puts every byte value at every position of runs of 1 to 40
// bytes (of plain bytes, and of bytes that borrow in the word test: 0x20
// and '#', just above the bounds), starting the scan at 0, 1, at the byte,
// just after it (where it must not count) and at the last byte, for both
// instantiations, and compares PlainRun with the reference.
func TestPlainRun(t *testing.T) {
	for _, fill := range []byte{'a', ' ', '#', ']', '~'} {
		for n := 1; n <= 40; n++ { // two 16-byte blocks, a word, a tail
			for pos := range n {
				for c := range 256 {
					b := []byte(strings.Repeat(string([]byte{fill}), n))
					b[pos] = byte(c)
					for _, from := range []int{0, 1, pos, pos + 1, n - 1} {
						want := plainRunBytes(string(b), from)
						if got := PlainRun(string(b), from); got != want {
							t.Fatalf("PlainRun(%q, %d) = %d, want %d", b, from, got, want)
						}
						if got := PlainRun(b, from); got != want {
							t.Fatalf("PlainRun([]byte(%q), %d) = %d, want %d", b, from, got, want)
						}
					}
				}
			}
		}
	}
}

// validRunes is s with each byte of invalid UTF-8 replaced by U+FFFD, as
// AppendString (and encoding/json) replace them.
func validRunes(s string) string {
	var b strings.Builder
	for _, r := range s { // range yields U+FFFD for each invalid byte
		b.WriteRune(r)
	}
	return b.String()
}

// checkAppendString fails unless AppendString(s) is one JSON string that
// decodes to s (invalid bytes as U+FFFD), with no escape beyond what JSON
// requires, and, for valid UTF-8, as long as QuotedLen says.
func checkAppendString(t *testing.T, s string) {
	t.Helper()
	out := AppendString([]byte("x"), s)[1:]
	if string(AppendString(nil, []byte(s))) != string(out) {
		t.Fatalf("AppendString of %q: the string and []byte forms differ", s)
	}
	var back string
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatalf("AppendString(%q) = %s: %v", s, out, err)
	}
	if want := validRunes(s); back != want {
		t.Fatalf("AppendString(%q) = %s, decodes to %q, want %q", s, out, back, want)
	}
	for i := 1; i < len(out)-1; i++ {
		if c := out[i]; c < 0x20 {
			t.Fatalf("AppendString(%q) = %q: raw control byte", s, out)
		}
	}
	if utf8.ValidString(s) {
		if n := QuotedLen([]byte(s)); n != len(out)-2 {
			t.Fatalf("QuotedLen(%q) = %d, AppendString wrote %d", s, n, len(out)-2)
		}
		if bytes.Contains(out, []byte(`\u`)) && !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 && r != '\n' && r != '\r' && r != '\t' }) {
			t.Fatalf("AppendString(%q) = %s: escapes more than JSON requires", s, out)
		}
	}
}

func TestAppendString(t *testing.T) {
	for _, s := range []string{
		"", "plain", "a longer plain ASCII run of text", `quote " and \ backslash`,
		"\n\r\t\b\f\x00\x1f\x7f", "é 😀 \u2028\u2029 \uFFFD", "bad \xff byte", "\xc3", "\xed\xa0\x80 surrogate",
		"\xf4\x90\x80\x80 above U+10FFFF", "mixed é\x80\"\\\n" + strings.Repeat("x", 20),
	} {
		checkAppendString(t, s)
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "é\xff\"\\\n\x01", "\u2028\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(checkAppendString)
}
