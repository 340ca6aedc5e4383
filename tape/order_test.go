package tape

import (
	"slices"
	"testing"
)

func TestTimeOrder(t *testing.T) {
	tests := []struct {
		name  string
		times []int64
		want  []int // indexes of pushes in pop order
	}{
		{"in order", []int64{1, 2, 3}, []int{0, 1, 2}},
		{"late one", []int64{1, 5, 3}, []int{0, 2, 1}},
		{"equal times keep push order", []int64{2, 1, 2, 1}, []int{1, 3, 0, 2}},
		{"reversed", []int64{3, 2, 1}, []int{2, 1, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var o TimeOrder[int]
			for i, ts := range tt.times {
				o.Push(ts, i)
			}
			if p := o.Peek(len(tt.times)); p != nil {
				t.Error("Peek past the end")
			}
			var got []int
			for o.Len() > 0 {
				got = append(got, o.Pop())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("order %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTimeOrderReady(t *testing.T) {
	var o TimeOrder[int]
	if o.Ready(true) {
		t.Error("empty queue ready")
	}
	o.Push(0, 0)
	o.Push(ReorderWindow, 1)
	if o.Ready(false) {
		t.Error("ready within the window")
	}
	if !o.Ready(true) {
		t.Error("not ready at the end")
	}
	o.Push(ReorderWindow+1, 2)
	if !o.Ready(false) {
		t.Error("not ready past the window")
	}
	var full TimeOrder[int]
	for i := range ReorderMax {
		if full.Ready(false) {
			t.Fatalf("ready with %d held", i)
		}
		full.Push(5, i)
	}
	if !full.Ready(false) {
		t.Error("not ready with ReorderMax held")
	}
	for i := range 3000 { // compaction keeps the order
		if v := full.Pop(); v != i {
			t.Fatalf("pop %d: %d", i, v)
		}
		full.Push(6, ReorderMax+i)
	}
	if v := full.Pop(); v != 3000 {
		t.Errorf("after compaction: %d", v)
	}
}
