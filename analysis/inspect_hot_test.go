package analysis

import (
	"fmt"
	"testing"
)

// TestHot: a hot cache holds the last hotSize entries put, whatever
// hotSize is, and get and getBytes agree.
func TestHot(t *testing.T) {
	var h hot[string, int]
	key := func(i int) string { return fmt.Sprint("k", i) }
	check := func(step string, k string, want int, wantOK bool) {
		t.Helper()
		v, ok := h.get(k)
		if v != want || ok != wantOK {
			t.Fatalf("%s: get(%q) = %d, %v; want %d, %v", step, k, v, ok, want, wantOK)
		}
		if v2, ok2 := getBytes(&h, []byte(k)); v2 != v || ok2 != ok {
			t.Fatalf("%s: getBytes(%q) = %d, %v; get says %d, %v", step, k, v2, ok2, v, ok)
		}
	}
	check("empty", key(0), 0, false)
	for i := range hotSize {
		h.put(key(i), i+1)
		for j := 0; j <= i; j++ {
			check(fmt.Sprint("after put ", i), key(j), j+1, true)
		}
		check(fmt.Sprint("after put ", i), key(i+1), 0, false)
	}
	// Full: each put replaces the oldest entry.
	for i := hotSize; i < 3*hotSize; i++ {
		h.put(key(i), i+1)
		check(fmt.Sprint("after put ", i), key(i-hotSize), 0, false)
		for j := i - hotSize + 1; j <= i; j++ {
			check(fmt.Sprint("after put ", i), key(j), j+1, true)
		}
	}
	if h.n != hotSize {
		t.Fatalf("%d entries, want %d", h.n, hotSize)
	}
	long := []byte(fmt.Sprint("a name longer than a stack buffer of 32 bytes ", hotSize))
	if n := testing.AllocsPerRun(10, func() { getBytes(&h, long) }); n != 0 {
		t.Errorf("getBytes: %v allocations", n)
	}
}
