package jsonrpc

import (
	"testing"
	"unsafe"
)

// TestInternMethod: internMethod finds every known name, returning the
// known string, and nothing else: each name with any one byte changed,
// cut short, made longer, and names of every length that no known name
// has, compared with a map of the known names.
func TestInternMethod(t *testing.T) {
	known := map[string]string{} // each known name, the very string in knownMethods
	for _, name := range knownMethods {
		known[name] = name
	}
	check := func(raw []byte) {
		t.Helper()
		got, ok := internMethod(raw)
		want, isKnown := known[string(raw)]
		if ok != isKnown || got != want {
			t.Fatalf("internMethod(%q) = %q, %v; want %q, %v", raw, got, ok, want, isKnown)
		}
		if ok && unsafe.StringData(got) != unsafe.StringData(want) {
			t.Fatalf("internMethod(%q) is not the known string", raw)
		}
	}
	for _, name := range knownMethods {
		check([]byte(name))
		for i := range len(name) {
			for _, c := range []byte{0, 'a', '/', name[i] ^ 0x20, name[i] + 1, 0xff} {
				b := []byte(name)
				b[i] = c
				check(b)
			}
			check([]byte(name[:i]))
		}
		check([]byte(name + "s"))
		check([]byte("x" + name))
	}
	for n := range 64 {
		b := make([]byte, n)
		for i := range b {
			b[i] = 'a' + byte(i%26)
		}
		check(b)
	}
}
