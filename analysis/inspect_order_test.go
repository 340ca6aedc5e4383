package analysis

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/tape"
)

// flushStep, among the times of writeOrderTape, is a Flush: a record
// older than one written before it is then written late.
const flushStep = time.Duration(-1)

// writeOrderTape writes a tape of ping requests at the times ats (since
// testStart), in that order, with a Flush at each flushStep.
func writeOrderTape(t *testing.T, path string, seg *tape.Segment, ats ...time.Duration) {
	t.Helper()
	end := testStart.Add(time.Second)
	w, err := tape.Create(path, tape.Header{Version: "test", Time: testStart.UnixNano(), Transport: "stdio", Segment: seg},
		tape.WithClock(func() time.Time { return end }), tape.WithFlushInterval(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for i, at := range ats {
		if at == flushStep {
			err = w.Flush(context.Background())
		} else {
			err = w.Write(&tape.Record{Type: tape.TypeMessage, Time: testStart.Add(at).UnixNano(), Session: "1",
				Dir: tape.ClientToServer, Frame: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i)})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestInspectWriterOrder: the report says how many records the tape
// writer wrote late (their time moved) or reordered, from the tape's
// "stats" event, summed over the tapes of a rotated recording read as
// one; a tape with none says nothing of it.
func TestInspectWriterOrder(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name            string
		tapes           [][]time.Duration // one rotated recording's tapes, in order
		late, reordered int64
		lateMax         time.Duration
		text            string // the line of the text form; "" for none
	}{
		{"in order", [][]time.Duration{{10 * ms, 20 * ms, flushStep, 30 * ms}}, 0, 0, 0, ""},
		{"late and reordered", [][]time.Duration{{100 * ms, 90 * ms, flushStep, 50 * ms}}, 1, 1, 50 * ms,
			"writer: 1 record written late, their time moved forward by up to 50.0ms · 1 record moved into time order"},
		{"rotated", [][]time.Duration{{100 * ms, flushStep, 80 * ms}, {200 * ms, flushStep, 150 * ms, 210 * ms}}, 2, 0, 50 * ms,
			"writer: 2 records written late, their time moved forward by up to 50.0ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var paths []string
			for i, ats := range tc.tapes {
				var seg *tape.Segment
				if len(tc.tapes) > 1 {
					seg = &tape.Segment{Series: "s1", Seq: i + 1}
				}
				path := filepath.Join(dir, fmt.Sprintf("t-%d.jsonl.zst", i+1))
				writeOrderTape(t, path, seg, ats...)
				paths = append(paths, path)
			}
			r, err := tape.OpenJoined(paths)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			rep, err := InspectTape(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			tp := rep.Tape
			if tp.Late != tc.late || tp.Reordered != tc.reordered || tp.LateMaxNS != int64(tc.lateMax) {
				t.Errorf("late %d (max %v), reordered %d; want %d (%v), %d", tp.Late, time.Duration(tp.LateMaxNS), tp.Reordered,
					tc.late, tc.lateMax, tc.reordered)
			}
			var js, text bytes.Buffer
			if err := WriteJSON(&js, rep); err != nil {
				t.Fatal(err)
			}
			if err := WriteText(&text, rep); err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{`"late":`, `"late_max_ns":`, `"reordered":`} {
				want := key == `"reordered":` && tc.reordered > 0 || key != `"reordered":` && tc.late > 0
				if got := strings.Contains(js.String(), key); got != want {
					t.Errorf("JSON has %s: %v, want %v", key, got, want)
				}
			}
			if got := writerLine(text.String()); got != tc.text {
				t.Errorf("text line %q, want %q", got, tc.text)
			}
		})
	}
}

// writerLine returns the text form's line about the tape writer's order.
func writerLine(text string) string {
	for line := range strings.Lines(text) {
		if s := strings.TrimSpace(line); strings.HasPrefix(s, "writer:") {
			return s
		}
	}
	return ""
}
