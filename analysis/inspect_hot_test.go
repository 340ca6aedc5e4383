package analysis

import (
	"fmt"
	"testing"
)

func TestHot(t *testing.T) {
	var h hot[string, int]
	steps := []struct {
		put  string // "" for none
		get  string
		want int
		ok   bool
	}{
		{"", "a", 0, false},
		{"a", "a", 1, true},
		{"b", "a", 1, true},
		{"c", "b", 2, true},
		{"d", "d", 4, true},
		{"e", "a", 0, false}, // the oldest went out
		{"", "b", 2, true},
		{"", "e", 5, true},
		{"f", "b", 0, false},
		{"", "c", 3, true},
	}
	n := 0
	for i, st := range steps {
		if st.put != "" {
			n++
			h.put(st.put, int(st.put[0]-'a'+1))
		}
		v, ok := h.get(st.get)
		if v != st.want || ok != st.ok {
			t.Fatalf("step %d: get(%q) = %d, %v; want %d, %v", i, st.get, v, ok, st.want, st.ok)
		}
		if v2, ok2 := getBytes(&h, []byte(st.get)); v2 != v || ok2 != ok {
			t.Fatalf("step %d: getBytes(%q) = %d, %v; get says %d, %v", i, st.get, v2, ok2, v, ok)
		}
	}
	if h.n != hotSize {
		t.Fatalf("%d entries after %d puts, want %d", h.n, n, hotSize)
	}
	long := []byte(fmt.Sprint("a name longer than a stack buffer of 32 bytes ", len(steps)))
	if n := testing.AllocsPerRun(10, func() { getBytes(&h, long) }); n != 0 {
		t.Errorf("getBytes: %v allocations", n)
	}
}
