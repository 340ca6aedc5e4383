package analysis

import (
	"strconv"
	"strings"
	"testing"
)

// TestSessionLookup: Inspector.session finds a session's state whatever
// string holds its name (interned or not), keeps sessions apart however
// their names collide in its cache, and sees each name once in its map.
func TestSessionLookup(t *testing.T) {
	in, err := NewInspector(nil)
	if err != nil {
		t.Fatal(err)
	}
	const n = 3 * sessionSlots // more than the cache holds
	interned := make([]string, n)
	for i := range interned {
		interned[i] = "session-" + strconv.Itoa(i)
	}
	first := make([]*sessionState, n)
	for round := range 4 {
		for i := range n {
			name := interned[(i*7+round)%n]
			if round%2 == 1 { // the same name in a string of its own
				name = strings.Clone(name)
			}
			s := in.session(name, int64(round))
			k := (i*7 + round) % n
			if first[k] == nil {
				first[k] = s
			}
			if s != first[k] || s.id != interned[k] {
				t.Fatalf("round %d: session(%q) = %q (%p), want %p", round, name, s.id, s, first[k])
			}
		}
	}
	if len(in.sessions) != n || len(in.order) != n {
		t.Fatalf("%d sessions in the map, %d listed; want %d", len(in.sessions), len(in.order), n)
	}
}
