package tape

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
)

// TestJoinSumsStats: tapes read as one end with one "stats" event, the
// sum of theirs (the highest of the highest values), so that what the
// writers did over a rotated recording (late and reordered records
// above all) is not lost with the tapes' own events; it says how many
// tapes it sums, which no recorded stats event does. The same tapes
// joined with cat, one file, read as one the same way (whichever way the
// Reader is read), except by a live tail (WithFileOrder), which keeps
// each tape's own stats event, its end record, where it is.
func TestJoinSumsStats(t *testing.T) {
	// times: the records written, in that order; 0 is a Flush, after which
	// an older record is written late (its time moved to the newest cut).
	type tapeSpec struct {
		host   string
		series string
		seq    int
		times  []int64
	}
	for _, tc := range []struct {
		name  string
		tapes []tapeSpec
		want  StatsData // of the counts the test sets up
	}{
		{"one rotated recording", []tapeSpec{
			{"h", "s1", 1, []int64{100, 0, 40}},          // 1 late by 60
			{"h", "s1", 2, []int64{200, 150, 0, 120, 0}}, // 1 reordered, 1 late by 80
		}, StatsData{Reordered: 1, Late: 2, LateMaxNs: 80}},
		{"two recordings", []tapeSpec{
			{"pod-a", "", 0, []int64{100, 90, 0, 10}}, // 1 reordered, 1 late by 90
			{"pod-b", "", 0, []int64{105, 0, 95}},     // 1 late by 10
		}, StatsData{Reordered: 1, Late: 2, LateMaxNs: 90}},
		{"none late", []tapeSpec{
			{"h", "s2", 1, []int64{10, 20}},
			{"h", "s2", 2, []int64{30}},
		}, StatsData{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var paths []string
			var sum StatsData // of the tapes' own stats events
			for i, spec := range tc.tapes {
				h := testHeader()
				h.Host, h.Time = spec.host, int64(i+1)
				if spec.series != "" {
					h.Segment = &Segment{Series: spec.series, Seq: spec.seq}
				}
				path := filepath.Join(dir, fmt.Sprintf("t%d.jsonl.zst", i))
				writeFlushed(t, path, h, spec.times)
				r, err := Open(path)
				if err != nil {
					t.Fatal(err)
				}
				st, n := statsOf(t, drain(t, r))
				r.Close()
				if n != 1 || st.Tapes != 0 {
					t.Fatalf("%s: %d stats events, tapes %d: want 1, none (recorded)", path, n, st.Tapes)
				}
				sum.add(&st)
				paths = append(paths, path)
			}
			check := func(t *testing.T, recs []*Record) {
				t.Helper()
				got, n := statsOf(t, recs)
				if last := recs[len(recs)-1]; n != 1 || last.Event != EventStats {
					t.Fatalf("%d stats events, the last record %q: want one, last", n, last.Event)
				}
				for i, rec := range recs[1:] {
					if rec.Time < recs[i].Time {
						t.Errorf("record %d (%s %s) at %d, before the one ahead of it at %d", i+1, rec.Type, rec.Event, rec.Time, recs[i].Time)
					}
				}
				if got != sum {
					t.Errorf("joined stats %+v, want the sum %+v", got, sum)
				}
				if got.Reordered != tc.want.Reordered || got.Late != tc.want.Late || got.LateMaxNs != tc.want.LateMaxNs {
					t.Errorf("reordered %d, late %d (max %d); want %d, %d (%d)", got.Reordered, got.Late, got.LateMaxNs,
						tc.want.Reordered, tc.want.Late, tc.want.LateMaxNs)
				}
				if got.Tapes != int64(len(tc.tapes)) {
					t.Errorf("joined stats say %d tapes, want %d: the event is the join's", got.Tapes, len(tc.tapes))
				}
				if got.Records < int64(len(tc.tapes)) {
					t.Errorf("joined stats count %d records", got.Records)
				}
			}
			r, err := OpenJoined(paths)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			check(t, drain(t, r))
			cat := peertest.Cat(t, paths...)
			for _, way := range readWays {
				t.Run("cat, "+way.name, func(t *testing.T) {
					r, err := Open(cat)
					if err != nil {
						t.Fatal(err)
					}
					defer r.Close()
					check(t, way.read(t, r))
				})
			}
			t.Run("cat, live tail", func(t *testing.T) {
				r, err := Open(cat, WithFileOrder())
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				if st, n := statsOf(t, drain(t, r)); n != len(tc.tapes) || st.Tapes != 0 {
					t.Errorf("%d stats events, the last saying %d tapes; want each tape's own (%d), as recorded", n, st.Tapes, len(tc.tapes))
				}
			})
		})
	}
}

// writeFlushed writes a tape of messages at times (0: a Flush instead).
func writeFlushed(t *testing.T, path string, h Header, times []int64) {
	t.Helper()
	newest := int64(0)
	for _, tm := range times {
		newest = max(newest, tm)
	}
	w, err := Create(path, h, WithClock(func() time.Time { return time.Unix(0, newest) }), WithFlushInterval(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for _, tm := range times {
		if tm == 0 {
			err = w.Flush(context.Background())
		} else {
			err = w.Write(msg(tm, ClientToServer, `{"jsonrpc":"2.0","method":"x"}`))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// statsOf returns the last stats event's counts among recs, and how many
// there are.
func statsOf(t *testing.T, recs []*Record) (StatsData, int) {
	t.Helper()
	var st StatsData
	n := 0
	for _, rec := range recs {
		if rec.Type == TypeEvent && rec.Event == EventStats {
			n++
			if err := json.Unmarshal(rec.Data, &st); err != nil {
				t.Fatal(err)
			}
		}
	}
	return st, n
}
