package tape

import (
	"strings"
	"testing"
	"time"
)

// FuzzSegmentName: ParseSegmentName reads back what SegmentName wrote (the
// name, number and start time, to the second), and of any other file name
// it accepts, SegmentName writes that name again.
func FuzzSegmentName(f *testing.F) {
	f.Add("api", 1, int64(1796248840), "api-000001-20261201T160700Z.jsonl.zst")
	f.Add("pod-a-7", 1234567, int64(0), "x-1-20261201T160700Z.jsonl.zst")
	f.Add("a", 42, int64(-62135596800), "a-0000001-00010101T000000Z.jsonl.zst")
	f.Fuzz(func(t *testing.T, name string, seq int, unix int64, file string) {
		start := time.Unix(unix, 0).UTC()
		if name != "" && seq >= 1 && start.Year() >= 0 && start.Year() <= 9999 {
			got, gotSeq, gotStart, ok := ParseSegmentName(SegmentName(name, seq, start))
			if !ok || got != name || gotSeq != seq || !gotStart.Equal(start) {
				t.Errorf("SegmentName(%q, %d, %v) read back as %q, %d, %v, %v", name, seq, start, got, gotSeq, gotStart, ok)
			}
		}
		n, s, st, ok := ParseSegmentName(file)
		if !ok {
			return
		}
		if n == "" || s < 1 || !strings.HasSuffix(file, Ext) {
			t.Fatalf("ParseSegmentName(%q) = %q, %d, %v", file, n, s, st)
		}
		if again := SegmentName(n, s, st); again != file {
			// Only the number may be written otherwise (leading zeros
			// beyond six digits, a sign): it must still read the same.
			n2, s2, st2, ok2 := ParseSegmentName(again)
			if !ok2 || n2 != n || s2 != s || !st2.Equal(st) {
				t.Errorf("%q: parsed as %q %d %v, written again as %q, which reads %q %d %v %v", file, n, s, st, again, n2, s2, st2, ok2)
			}
		}
	})
}
