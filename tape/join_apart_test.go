package tape_test

// Tests of joined reads that write their tapes with internal/tapetest,
// which an internal test of package tape cannot import (it imports tape).

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/tapetest"
	"github.com/mcptape/mcptape/tape"
)

// TestJoinKeepsRecordingsApart: tapes of two proxies merge in time order
// with their sessions and exchanges kept apart.
func TestJoinKeepsRecordingsApart(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for i, host := range []string{"pod-a", "pod-b"} {
		h := tape.TestHeader()
		h.Host = host
		var recs []*tape.Record
		for k := range 3 {
			rec := tape.Msg(int64(10*k+i), tape.ClientToServer, `{"jsonrpc":"2.0","method":"x"}`)
			rec.Session, rec.Exchange = "conn-1", 1
			recs = append(recs, rec)
		}
		paths = append(paths, tapetest.Write(t, filepath.Join(dir, host+".jsonl.zst"), h, recs))
	}
	h, recs := readJoined(t, paths)
	var got []string
	for _, rec := range recs {
		if rec.Type == tape.TypeMessage {
			got = append(got, fmt.Sprintf("%d:%s:%d", rec.Time, rec.Session, rec.Exchange>>40))
		}
	}
	want := "0:pod-a/conn-1:1 1:pod-b/conn-1:2 10:pod-a/conn-1:1 11:pod-b/conn-1:2 20:pod-a/conn-1:1 21:pod-b/conn-1:2"
	if g := strings.Join(got, " "); g != want {
		t.Errorf("got  %s\nwant %s", g, want)
	}
	if h.Host != "" {
		t.Errorf("joined header host %q, want none (they differ)", h.Host)
	}
}

// TestJoinNoteTimes: the note a joined reading puts where tapes of a
// series are missing (or one is damaged) has the time of the record
// before it, so the joined records stay in time order.
func TestJoinNoteTimes(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for _, seg := range []struct {
		seq   int
		start int64
		times []int64
	}{{1, 1, []int64{10, 20}}, {3, 25, []int64{30, 40}}} {
		h := tape.TestHeader()
		h.Time, h.Segment = seg.start, &tape.Segment{Series: "s1", Seq: seg.seq}
		var recs []*tape.Record
		for _, tm := range seg.times {
			recs = append(recs, tape.Msg(tm, tape.ClientToServer, `{"jsonrpc":"2.0","method":"x"}`))
		}
		end := time.Unix(0, seg.times[len(seg.times)-1])
		paths = append(paths, tapetest.Write(t, filepath.Join(dir, fmt.Sprintf("seg-%d.jsonl.zst", seg.seq)), h, recs,
			tape.WithClock(func() time.Time { return end })))
	}
	_, recs := readJoined(t, paths)
	var got []string
	for _, rec := range recs {
		got = append(got, fmt.Sprintf("%s%s@%d", rec.Type, rec.Event, rec.Time))
	}
	want := "message@10 message@20 eventerror@20 message@30 message@40 eventstats@40"
	if g := strings.Join(got, " "); g != want {
		t.Errorf("got  %s\nwant %s", g, want)
	}
}

// readJoined reads the tapes at paths joined (tape.OpenJoined) to their
// end and returns the joined header and the records.
func readJoined(t *testing.T, paths []string) (*tape.Header, []*tape.Record) {
	t.Helper()
	r, err := tape.OpenJoined(paths)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	recs := tape.Drain(t, r)
	return r.Header(), recs
}
