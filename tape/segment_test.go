package tape

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/jsonrpc"
)

// readAll reads a whole tape with one of the Reader's ways of reading,
// each record copied out of the Reader's buffers.
type readAll func(t *testing.T, r *Reader) []*Record

var readWays = []struct {
	name string
	read readAll
}{
	{"Next", func(t *testing.T, r *Reader) []*Record { return drain(t, r) }},
	{"NextShared", func(t *testing.T, r *Reader) []*Record {
		return drainWith(t, r, func(rec *Record) error { return r.NextShared(rec) })
	}},
	{"NextClassified", func(t *testing.T, r *Reader) []*Record {
		var info jsonrpc.Info
		return drainWith(t, r, func(rec *Record) error { return r.NextClassified(rec, &info) })
	}},
	{"NextShared after DecodeAhead", func(t *testing.T, r *Reader) []*Record {
		if err := r.DecodeAhead(2); err != nil {
			t.Fatal(err)
		}
		return drainWith(t, r, func(rec *Record) error { return r.NextShared(rec) })
	}},
}

// drainWith reads r to its end with next, which must come without a
// warning, and returns copies of the records.
func drainWith(t *testing.T, r *Reader, next func(*Record) error) []*Record {
	t.Helper()
	var recs []*Record
	for {
		var rec Record
		err := next(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		rec.Frame, rec.Data = bytes.Clone(rec.Frame), bytes.Clone(rec.Data)
		recs = append(recs, &rec)
	}
	if w := r.Warning(); w != nil {
		t.Fatalf("warning: %v", w)
	}
	return recs
}

// TestCatJoinedTapeKeepsTapesApart: recorded tapes joined with cat (their
// zstd frames concatenated) read as their records one tape after the
// other, each later tape's sessions named "rN/ID" and its exchange
// numbers offset, as the joined read keeps recordings apart: ids that
// restart in the second tape are not ids reused in one session. The
// second header starts the segment and is not a record. Tapes without
// time_ordered are put in time order, in the middle too. Their "stats"
// events end the file as one, their sum, as a joined read ends.
func TestCatJoinedTapeKeepsTapesApart(t *testing.T) {
	const dir = "../testdata/analysis"
	for _, tc := range []struct {
		name  string
		tapes []string
	}{
		{"stdio, older tapes", []string{"everything-stdio.jsonl.zst", "gosdk-everything.jsonl.zst"}},
		{"http, exchanges", []string{"operations-http.jsonl.zst", "export/http.jsonl.zst"}},
		{"time-ordered then older", []string{"operations.jsonl.zst", "gosdk-refserver.jsonl.zst", "export/stdio.jsonl.zst"}},
	} {
		var paths []string
		var want [][]*Record // each tape read alone, but its stats event
		var sum *StatsData   // of their stats events
		var first *Header
		for i, name := range tc.tapes {
			paths = append(paths, filepath.Join(dir, name))
			r, err := Open(paths[i])
			if err != nil {
				t.Fatal(err)
			}
			if i == 0 {
				first = r.Header()
			}
			var recs []*Record
			for _, rec := range drain(t, r) {
				if rec.Type == TypeEvent && rec.Event == EventStats {
					addStats(&sum, rec)
					continue
				}
				recs = append(recs, rec)
			}
			want = append(want, recs)
			r.Close()
		}
		cat := peertest.Cat(t, paths...)
		for _, way := range readWays {
			t.Run(tc.name+"/"+way.name, func(t *testing.T) {
				r, err := Open(cat)
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				if r.Header().Time != first.Time || r.Header().Target != first.Target {
					t.Errorf("header %+v, want the first tape's %+v", r.Header(), first)
				}
				got := way.read(t, r)
				k := 0
				for i, recs := range want {
					for _, w := range recs {
						w := *w
						if i > 0 {
							if w.Session != "" {
								w.Session = fmt.Sprintf("r%d/%s", i+1, w.Session)
							}
							if w.Exchange != 0 {
								w.Exchange += uint64(i+1) << segmentShift
							}
						}
						if k >= len(got) {
							t.Fatalf("%d records, want %d", len(got), k+len(recs))
						}
						if d := diffRecord(&w, got[k]); d != "" {
							t.Fatalf("tape %d, record %d: %s", i+1, k, d)
						}
						k++
					}
				}
				if sum != nil {
					var st StatsData
					if k >= len(got) || got[k].Event != EventStats || json.Unmarshal(got[k].Data, &st) != nil || st != *sum {
						t.Fatalf("record %d of %d: want the last, the sum of the tapes' stats %+v", k, len(got), *sum)
					}
					k++
				}
				if k != len(got) {
					t.Fatalf("%d records, want %d (the tapes' own)", len(got), k)
				}
				if r.Records() != int64(k) {
					t.Errorf("Records() = %d, want %d", r.Records(), k)
				}
			})
		}
	}
}

// TestCatJoinedRotationContinues: the tapes of one rotated recording
// joined with cat continue their sessions, as OpenJoined reads a series;
// a tape of another recording between or after them is kept apart, and
// the series' later tape goes back to the series' names.
func TestCatJoinedRotationContinues(t *testing.T) {
	tmp := t.TempDir()
	write := func(name, series string, seq int, host string) []byte {
		h := testHeader()
		h.Host = host
		if series != "" {
			h.Segment = &Segment{Series: series, Seq: seq}
		}
		path := filepath.Join(tmp, name)
		writeFlushed(t, path, h, []int64{t0.UnixNano() + int64(seq)})
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	s1 := write("s1.jsonl.zst", "abc", 1, "h")
	s2 := write("s2.jsonl.zst", "abc", 2, "h")
	other := write("o.jsonl.zst", "", 3, "h")
	s3 := write("s3.jsonl.zst", "abc", 4, "h")
	cat := bytes.Join([][]byte{s1, s2, other, s3}, nil)
	r, err := NewReader(bytes.NewReader(cat))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var sessions []string
	for _, rec := range drain(t, r) {
		if rec.Type == TypeMessage {
			sessions = append(sessions, rec.Session)
		}
	}
	if want := []string{"s1", "s1", "r2/s1", "s1"}; fmt.Sprint(sessions) != fmt.Sprint(want) {
		t.Errorf("sessions %q, want %q", sessions, want)
	}
}

// TestJoinOfCatJoinedTape: a tape joined with cat can be one of the tapes
// of a joined read: its second header is not a record the join has to
// write (it was refused: "the header is written by Create/NewWriter"), and
// its tapes' sessions stay apart from each other and from the other
// tape's.
func TestJoinOfCatJoinedTape(t *testing.T) {
	const dir = "../testdata/analysis"
	a, b := filepath.Join(dir, "everything-stdio.jsonl.zst"), filepath.Join(dir, "gosdk-everything.jsonl.zst")
	r, err := OpenJoined([]string{peertest.Cat(t, a, b), filepath.Join(dir, "operations.jsonl.zst")})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sessions := messagesBySession(drain(t, r))
	want := map[string]int{}
	for label, path := range map[string]string{"vm/": a, "vm/r2/": b} { // both recorded on host vm
		alone, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		for id, n := range messagesBySession(drain(t, alone)) {
			want[label+id] = n
		}
		alone.Close()
	}
	for id, n := range want {
		if sessions[id] != n {
			t.Errorf("session %q: %d messages, want %d (all: %v)", id, sessions[id], n, sessions)
		}
	}
}

// TestJoinOfCatJoinedTapesExchanges: in a joined read of several
// recordings, one of them a file of tapes joined with cat, an exchange
// number belongs to one recording only (the analysis pairs an exchange's
// records by its number alone), and stays exact in a JavaScript number.
func TestJoinOfCatJoinedTapesExchanges(t *testing.T) {
	const dir = "../testdata/analysis"
	var paths []string
	for _, name := range []string{"operations-http.jsonl.zst", "export/http.jsonl.zst", "violations-http.jsonl.zst", "everything-http.jsonl.zst"} {
		paths = append(paths, filepath.Join(dir, name))
	}
	own := map[string]bool{} // the tapes' own session ids (some hold a '/')
	for _, path := range paths {
		alone, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range drain(t, alone) {
			own[rec.Session] = true
		}
		alone.Close()
	}
	r, err := OpenJoined(append([]string{peertest.Cat(t, paths[:2]...)}, paths[2:]...))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	owner := map[uint64]string{} // exchange: the recording its first session names
	for _, rec := range drain(t, r) {
		if rec.Exchange == 0 || rec.Session == "" {
			continue
		}
		if rec.Exchange >= 1<<53 {
			t.Fatalf("exchange %d: not exact in a JavaScript number", rec.Exchange)
		}
		label := recordingOf(rec.Session, own)
		if o, ok := owner[rec.Exchange]; ok && o != label {
			t.Errorf("exchange %d in recordings %s and %s", rec.Exchange, o, label)
		}
		owner[rec.Exchange] = label
	}
	if len(owner) == 0 {
		t.Fatal("no exchange read")
	}
}

// messagesBySession counts the messages of each session among recs.
func messagesBySession(recs []*Record) map[string]int {
	n := map[string]int{}
	for _, rec := range recs {
		if rec.Type == TypeMessage {
			n[rec.Session]++
		}
	}
	return n
}

// recordingOf returns the part of a joined read's session id that names
// its recording: what comes before the tape's own id, one of own.
func recordingOf(session string, own map[string]bool) string {
	for i := 0; i < len(session); i++ {
		if session[i] == '/' && own[session[i+1:]] {
			return session[:i]
		}
	}
	return session
}
