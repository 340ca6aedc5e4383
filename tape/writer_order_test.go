package tape

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"
)

// TestWriterTimeOrder: whatever the order of the Writes, the tape's records
// come in time order, records of equal times in the order written; a
// record older than a batch already cut (a Flush here) is written with the
// newest time cut, and counted.
func TestWriterTimeOrder(t *testing.T) {
	const cut = -1 // a Flush between two writes
	for _, tc := range []struct {
		name            string
		times           []int64 // times written, or cut
		want            []int64 // times read back, in file order
		wantFrom        []int   // the index in times (cuts not counted) of each record read back
		reordered, late int64
		lateMax         int64
	}{
		{name: "in order", times: []int64{1, 2, 2, 5}, want: []int64{1, 2, 2, 5}, wantFrom: []int{0, 1, 2, 3}},
		{name: "one late in the batch", times: []int64{1, 4, 6, 3, 7}, want: []int64{1, 3, 4, 6, 7}, wantFrom: []int{0, 3, 1, 2, 4}, reordered: 1},
		{name: "late to the front", times: []int64{5, 6, 2}, want: []int64{2, 5, 6}, wantFrom: []int{2, 0, 1}, reordered: 1},
		{name: "equal times keep their order", times: []int64{1, 3, 3, 2, 3}, want: []int64{1, 2, 3, 3, 3}, wantFrom: []int{0, 3, 1, 2, 4}, reordered: 1},
		{name: "late past a cut", times: []int64{1, 5, cut, 3, 6}, want: []int64{1, 5, 5, 6}, wantFrom: []int{0, 1, 2, 3}, late: 1, lateMax: 2},
		{name: "no time stays in place", times: []int64{4, 0, 2}, want: []int64{2, 4, 0}, wantFrom: []int{2, 0, 1}, reordered: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			w, err := NewWriter(&buf, testHeader(), WithClock(fixedClock()))
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, tm := range tc.times {
				if tm == cut {
					if err := w.Flush(context.Background()); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err := w.Write(&Record{Type: TypeMessage, Time: tm, Frame: []byte{'0' + byte(n)}}); err != nil {
					t.Fatal(err)
				}
				n++
			}
			st := w.Stats()
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			recs, h, warn := readTape(t, buf.Bytes(), true)
			if warn != nil {
				t.Fatal(warn)
			}
			if !h.TimeOrdered {
				t.Error("header without time_ordered")
			}
			if len(recs) != len(tc.want) {
				t.Fatalf("%d records, want %d", len(recs), len(tc.want))
			}
			for i, r := range recs {
				if r.Time != tc.want[i] || int(r.Frame[0]-'0') != tc.wantFrom[i] {
					t.Errorf("record %d: written %d-th at %d, want the %d-th at %d", i, r.Frame[0]-'0', r.Time, tc.wantFrom[i], tc.want[i])
				}
			}
			if st.Reordered != tc.reordered || st.Late != tc.late || st.LateMax != tc.lateMax {
				t.Errorf("stats reordered %d late %d (max %d), want %d, %d (%d)", st.Reordered, st.Late, st.LateMax, tc.reordered, tc.late, tc.lateMax)
			}
		})
	}
}

// TestWriterHoldsRecentRecords: at a cut, the records stamped within the
// last flush interval stay for the next batch, so that a record written a
// moment after its stamp still goes before them instead of being clamped;
// at the next cut they go out whatever their time.
func TestWriterHoldsRecentRecords(t *testing.T) {
	const now = int64(10 * time.Hour)
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader(), WithClock(func() time.Time { return time.Unix(0, now) }),
		WithFlushInterval(time.Hour)) // no tick: the test cuts
	if err != nil {
		t.Fatal(err)
	}
	write := func(tm int64) {
		if err := w.Write(&Record{Type: TypeMessage, Time: tm, Frame: []byte(fmt.Sprint(tm))}); err != nil {
			t.Fatal(err)
		}
	}
	cut := func() (cut, held int) {
		w.mu.Lock()
		defer w.mu.Unlock()
		before := len(w.pendN)
		w.cutLocked(true)
		if len(w.pendN) > before {
			cut = int(w.pendN[len(w.pendN)-1])
		}
		return cut, len(w.lines)
	}
	old, recent := now-2*int64(time.Hour), now-int64(time.Millisecond)
	write(old)
	write(recent)
	if c, h := cut(); c != 1 || h != 1 {
		t.Fatalf("first cut: %d records cut, %d held; want 1, 1", c, h)
	}
	write(recent - 1) // stamped before the held one, written after the cut
	if c, h := cut(); c != 2 || h != 0 {
		t.Fatalf("second cut: %d records cut, %d held; want the held one and the late one, none held", c, h)
	}
	st := w.Stats()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	recs, _, _ := readTape(t, buf.Bytes(), true)
	var got []string
	for _, r := range recs {
		got = append(got, string(r.Frame))
	}
	if want := fmt.Sprint([]int64{old, recent - 1, recent}); fmt.Sprint(got) != want || st.Late != 0 || st.Reordered != 1 {
		t.Errorf("records %v, late %d, reordered %d; want %s, none late, 1 reordered", got, st.Late, st.Reordered, want)
	}
}

// TestWriterHeldOnce: records held at a cut that cut nothing (all of them
// recent, or stamped by a clock ahead of the Writer's) go out at the next
// cut.
func TestWriterHeldOnce(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, testHeader(), WithClock(fixedClock()), WithFlushInterval(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	future := t0.Add(time.Minute).UnixNano()
	if err := w.Write(&Record{Type: TypeMessage, Time: future, Frame: []byte("1")}); err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{0, 1} {
		w.mu.Lock()
		w.cutLocked(true)
		got := len(w.pendN)
		w.mu.Unlock()
		if got != want {
			t.Errorf("cut %d: %d batches cut, want %d", i+1, got, want)
		}
	}
	w.Close()
}

// TestWriterContinueFrom: a Rotator's next tape continues the previous
// one's time order, so a series read in number order stays in time order.
func TestWriterContinueFrom(t *testing.T) {
	var a, b bytes.Buffer
	prev, err := NewWriter(&a, testHeader(), WithClock(fixedClock()))
	if err != nil {
		t.Fatal(err)
	}
	next, err := NewWriter(&b, testHeader(), WithClock(fixedClock()))
	if err != nil {
		t.Fatal(err)
	}
	if err := prev.Write(&Record{Type: TypeMessage, Time: 100, Frame: []byte("1")}); err != nil {
		t.Fatal(err)
	}
	next.continueFrom(prev)
	if err := next.Write(&Record{Type: TypeMessage, Time: 50, Frame: []byte("2")}); err != nil {
		t.Fatal(err)
	}
	prev.Close()
	if err := next.Close(); err != nil {
		t.Fatal(err)
	}
	recs, _, _ := readTape(t, b.Bytes(), true)
	if st := next.Stats(); len(recs) != 1 || recs[0].Time != 100 || st.Late != 1 || st.LateMax != 50 {
		t.Errorf("records %v, late %d (max %d); want one at 100, 1 late by 50", recs, st.Late, st.LateMax)
	}
}
