package tape

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRotateUnderLoad: writers racing with rotations (by size and by hand)
// lose no record and duplicate none across the series' tapes, and the
// joined series reads back every record once.
func TestRotateUnderLoad(t *testing.T) {
	dir := t.TempDir()
	r, err := NewRotator(RotateConfig{Base: filepath.Join(dir, "run.jsonl.zst"), Size: 4 << 10,
		Header: testHeader(), Options: []Option{WithFlushInterval(5 * time.Millisecond), WithLevel(1)}})
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 4, 1500
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				frame := fmt.Sprintf(`{"jsonrpc":"2.0","method":"m","params":{"w":%d,"i":%d}}`, w, i)
				if err := r.Write(&Record{Type: TypeMessage, Time: time.Now().UnixNano(), Session: fmt.Sprint("s", w), Dir: ClientToServer, Frame: []byte(frame)}); err != nil {
					t.Error(err)
					return
				}
				if i%300 == 0 && w == 0 {
					if err := r.Rotate(); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	segs, err := ListSeries(dir, "run")
	if err != nil {
		t.Fatal(err)
	}
	if len(segs) < 6 {
		t.Fatalf("%d tapes, want at least 6 rotations' worth", len(segs))
	}
	seen := map[string]int{}
	for k, s := range segs {
		if s.Seq != k+1 {
			t.Fatalf("tape %d has number %d", k, s.Seq)
		}
		tr, err := Open(s.Path)
		if err != nil {
			t.Fatal(err)
		}
		if h := tr.Header(); h.Segment == nil || h.Segment.Seq != s.Seq || h.Segment.Series != r.Series() {
			t.Fatalf("%s: header segment %+v", s.Path, h.Segment)
		}
		countMessages(t, tr, seen)
		tr.Close()
	}
	checkEach(t, seen, workers, each, 1)
	paths := make([]string, len(segs))
	for i, s := range segs {
		paths[len(segs)-1-i] = s.Path // any order: joined by number
	}
	jr, err := OpenJoined(paths)
	if err != nil {
		t.Fatal(err)
	}
	defer jr.Close()
	joined := map[string]int{}
	stats := countMessages(t, jr, joined)
	checkEach(t, joined, workers, each, 1)
	if stats != 1 {
		t.Errorf("joined tape has %d stats events, want one, the sum of the tapes", stats)
	}
}

// countMessages adds the tape's messages to seen and returns how many
// stats events it holds.
func countMessages(t *testing.T, r *Reader, seen map[string]int) int {
	t.Helper()
	stats := 0
	for _, rec := range drain(t, r) {
		if rec.Event == EventStats {
			stats++
		}
		if rec.Type == TypeMessage {
			seen[string(rec.Frame)]++
		}
	}
	return stats
}

// drain reads r to its end, which must come without a warning.
func drain(t *testing.T, r *Reader) []*Record {
	t.Helper()
	var recs []*Record
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	if w := r.Warning(); w != nil {
		t.Fatalf("warning: %v", w)
	}
	return recs
}

func checkEach(t *testing.T, seen map[string]int, workers, each, want int) {
	t.Helper()
	if len(seen) != workers*each {
		t.Fatalf("%d distinct records, want %d", len(seen), workers*each)
	}
	for f, n := range seen {
		if n != want {
			t.Fatalf("%s seen %d times", f, n)
		}
	}
}

// TestRetentionSparesOpenTape: retention by size deletes the oldest closed
// tapes and never the open one, even when the open one alone is over the
// limit; retention by age likewise.
func TestRetentionSparesOpenTape(t *testing.T) {
	for _, tc := range []struct {
		name     string
		keep     time.Duration
		keepSize int64
	}{
		{name: "size", keepSize: 1},
		{name: "age", keep: time.Nanosecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			r, err := NewRotator(RotateConfig{Base: filepath.Join(dir, "x.jsonl.zst"), Keep: tc.keep, KeepSize: tc.keepSize, Header: testHeader()})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			for i := range 4 {
				if err := r.Write(msg(int64(i+1), ClientToServer, `{"jsonrpc":"2.0","method":"a"}`)); err != nil {
					t.Fatal(err)
				}
				time.Sleep(2 * time.Millisecond) // the closed tapes' ages pass keep
				if err := r.Rotate(); err != nil {
					t.Fatal(err)
				}
			}
			open := r.Stats().Path
			segs, err := ListSeries(dir, "x")
			if err != nil {
				t.Fatal(err)
			}
			if len(segs) != 1 || segs[0].Path != open {
				t.Fatalf("left %+v, want only the open tape %s", segs, open)
			}
			if st := r.Stats(); st.Deleted != 4 || st.Tapes != 5 {
				t.Errorf("stats %+v, want 5 tapes, 4 deleted", st)
			}
		})
	}
}

func TestRetain(t *testing.T) {
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	seg := func(seq int, size int64, age time.Duration) SegmentFile {
		return SegmentFile{Path: fmt.Sprint("p", seq), Seq: seq, Size: size, ModTime: now.Add(-age)}
	}
	segs := []SegmentFile{seg(1, 100, 5*time.Hour), seg(2, 100, 3*time.Hour), seg(3, 100, time.Hour), seg(4, 100, 0)}
	for _, tc := range []struct {
		name     string
		open     string
		keep     time.Duration
		keepSize int64
		want     string
	}{
		{name: "nothing asked", open: "p4"},
		{name: "age", open: "p4", keep: 2 * time.Hour, want: "p1 p2"},
		{name: "size", open: "p4", keepSize: 250, want: "p1 p2"},
		{name: "size, everything", open: "p4", keepSize: 1, want: "p1 p2 p3"},
		{name: "open is not the newest", open: "p1", keepSize: 1, want: "p2 p3"},
		{name: "age and size", open: "p4", keep: 4 * time.Hour, keepSize: 300, want: "p1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, s := range Retain(segs, tc.open, tc.keep, tc.keepSize, now) {
				got = append(got, s.Path)
			}
			if g := strings.Join(got, " "); g != tc.want {
				t.Errorf("deleted %q, want %q", g, tc.want)
			}
		})
	}
}

func TestSegmentName(t *testing.T) {
	start := time.Date(2026, 12, 1, 16, 7, 45, 0, time.UTC)
	for _, tc := range []struct {
		file string
		name string
		seq  int
		ok   bool
	}{
		{file: SegmentName("run", 42, start), name: "run", seq: 42, ok: true},
		{file: SegmentName("a-b-000001", 1, start), name: "a-b-000001", seq: 1, ok: true},
		{file: SegmentName("run", 1234567, start), name: "run", seq: 1234567, ok: true},
		{file: "run.jsonl.zst"},
		{file: "run-000001-20261201T160745Z.jsonl"},
		{file: "run-01-20261201T160745Z.jsonl.zst"},
		{file: "run-000001-2026120XT160745Z.jsonl.zst"},
		{file: "-000001-20261201T160745Z.jsonl.zst"},
	} {
		name, seq, st, ok := ParseSegmentName(tc.file)
		if ok != tc.ok || name != tc.name || seq != tc.seq || (ok && !st.Equal(start)) {
			t.Errorf("%s: got %q %d %v %v", tc.file, name, seq, st, ok)
		}
	}
	if a, b := SegmentName("r", 9, start), SegmentName("r", 10, start.Add(-time.Hour)); a >= b {
		t.Errorf("%s sorts after %s", a, b)
	}
}

// TestRotatorTimeOrderStats: the Rotator's statistics carry its writers'
// time-order counts (records reordered, records late and the largest
// shift), over every tape of the series, open or closed, as a joined read
// of the series sums the tapes' stats events.
func TestRotatorTimeOrderStats(t *testing.T) {
	dir := t.TempDir()
	r, err := NewRotator(RotateConfig{Base: filepath.Join(dir, "x.jsonl.zst"), Header: testHeader(), Options: []Option{WithClock(fixedClock())}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	write := func(tm int64) {
		t.Helper()
		if err := r.Write(msg(tm, ClientToServer, `{"jsonrpc":"2.0","method":"a"}`)); err != nil {
			t.Fatal(err)
		}
	}
	flush := func() { // cut the open tape's batch
		t.Helper()
		r.mu.RLock()
		w := r.cur
		r.mu.RUnlock()
		if err := w.Flush(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	// each tape: a record moved before a newer one of its batch, and one
	// older than what was cut already (late by 2, then by 5)
	for i, lateBy := range []int64{2, 5} {
		base := int64(i) * 100
		write(base + 1)
		write(base + 6)
		write(base + 4)
		flush()
		write(base + 6 - lateBy)
		if i == 0 {
			if err := r.Rotate(); err != nil {
				t.Fatal(err)
			}
		}
	}
	const reordered, late, lateMax = 2, 2, 5
	check := func(when string, st RotatorStats) {
		t.Helper()
		if st.Reordered != reordered || st.Late != late || st.LateMax != lateMax {
			t.Errorf("%s: reordered %d, late %d (max %d), want %d, %d (%d)", when, st.Reordered, st.Late, st.LateMax, reordered, late, lateMax)
		}
	}
	check("open", r.Stats())
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	st := r.Stats()
	check("closed", st)
	segs, err := ListSeries(dir, "x")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, s := range segs {
		paths = append(paths, s.Path)
	}
	jr, err := OpenJoined(paths)
	if err != nil {
		t.Fatal(err)
	}
	defer jr.Close()
	var sum StatsData
	for _, rec := range drain(t, jr) {
		if rec.Event == EventStats {
			if err := json.Unmarshal(rec.Data, &sum); err != nil {
				t.Fatal(err)
			}
		}
	}
	if sum.Reordered != st.Reordered || sum.Late != st.Late || sum.LateMaxNs != st.LateMax {
		t.Errorf("joined stats event reordered %d late %d (max %d), the Rotator's %d %d (%d)", sum.Reordered, sum.Late, sum.LateMaxNs, st.Reordered, st.Late, st.LateMax)
	}
}

// TestRotateSparesTakenName: when another recorder of the same name
// created the next tape first (O_EXCL fails), the rotation fails and that
// tape stays, content included; the next rotation takes the next number.
func TestRotateSparesTakenName(t *testing.T) {
	dir := t.TempDir()
	r, err := NewRotator(RotateConfig{Base: filepath.Join(dir, "x.jsonl.zst"), Header: testHeader()})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	now := time.Now()
	var theirs []string // tape 2 for every second the rotation can start in
	for d := -time.Second; d <= 3*time.Second; d += time.Second {
		p := filepath.Join(dir, SegmentName("x", 2, now.Add(d)))
		if err := os.WriteFile(p, []byte("another recorder's tape"), 0o600); err != nil {
			t.Fatal(err)
		}
		theirs = append(theirs, p)
	}
	if err := r.Rotate(); !errors.Is(err, os.ErrExist) {
		t.Fatalf("rotate onto a taken name: %v, want an error wrapping ErrExist", err)
	}
	for _, p := range theirs {
		if b, err := os.ReadFile(p); err != nil || string(b) != "another recorder's tape" {
			t.Errorf("%s: %q, %v: the other recorder's tape was touched", filepath.Base(p), b, err)
		}
	}
	if err := r.Rotate(); err != nil {
		t.Fatal(err)
	}
	if _, seq, _, _ := ParseSegmentName(filepath.Base(r.Stats().Path)); seq != 3 {
		t.Errorf("next tape %s, want number 3", r.Stats().Path)
	}
}
