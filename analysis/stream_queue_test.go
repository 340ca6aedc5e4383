package analysis

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRecQueueOrder: whatever the lateness of records and however pushes
// and pops interleave, records leave the queue sorted by time, then in the
// order they came (the first pushed of those of the lowest time), through
// ring wraps and growth.
func TestRecQueueOrder(t *testing.T) {
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
			var q recQueue
			slots := make([]slot, tc.n)
			var held []seqRec // what the queue holds, in push order
			var now int64 = 1 << 40
			check := func() { // the first record pushed of those of the lowest time
				k := 0
				for j := range held {
					if held[j].time < held[k].time {
						k = j
					}
				}
				if got := q.pop(); got != held[k].sl {
					t.Fatalf("popped record %d, want %d (time %d)", got.item.Seq, held[k].sl.item.Seq, held[k].time)
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
				sl := &slots[i]
				sl.item.Seq = int64(i)
				held = append(held, seqRec{tm, sl})
				q.push(seqRec{tm, sl})
				if q.len() != len(held) {
					t.Fatalf("len %d, want %d", q.len(), len(held))
				}
				if q.len() > tc.hold {
					check()
				}
			}
			for q.len() > 0 {
				check()
			}
		})
	}
}
