package tape

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestTimeOrderRandom: whatever the lateness of records and however pushes
// and pops interleave, records leave the queue sorted by time, then in the
// order they came (the first pushed of those of the lowest time), through
// ring wraps and growth.
func TestTimeOrderRandom(t *testing.T) {
	for _, tc := range []struct {
		name      string
		late      int // one record in late is up to spread earlier than the last
		spread    int64
		hold      int // records held before each pop
		n         int
		tiesEvery int
	}{
		{"in order", 0, 0, 100, 1000, 0},
		{"ties", 0, 0, 70, 1000, 3},
		{"a few late", 10, 50, 100, 2000, 0},
		{"many late", 2, 500, 300, 3000, 5},
		{"late past the head", 3, 100000, 40, 1000, 0},
		{"growth", 5, 20, 300, 2000, 4},
		{"past ReorderMax", 5, 20, ReorderMax + 10, ReorderMax + 500, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, uint64(tc.n)))
			var q TimeOrder[int]
			type pushed struct {
				time int64
				i    int
			}
			var held []pushed // what the queue holds, in push order
			var now int64 = 1 << 40
			check := func() { // the first record pushed of those of the lowest time
				k := 0
				for j := range held {
					if held[j].time < held[k].time {
						k = j
					}
				}
				if got := q.Pop(); got != held[k].i {
					t.Fatalf("popped value %d, want %d (time %d)", got, held[k].i, held[k].time)
				}
				held = slices.Delete(held, k, k+1)
			}
			for i := range tc.n {
				if tc.tiesEvery == 0 || i%tc.tiesEvery != 0 {
					now += int64(r.IntN(100))
				}
				tm := now
				if tc.late > 0 && r.IntN(tc.late) == 0 {
					tm -= r.Int64N(tc.spread + 1)
				}
				held = append(held, pushed{tm, i})
				q.Push(tm, i)
				if q.Len() != len(held) {
					t.Fatalf("len %d, want %d", q.Len(), len(held))
				}
				if q.Len() > tc.hold {
					check()
				}
			}
			for q.Len() > 0 {
				check()
			}
		})
	}
}
