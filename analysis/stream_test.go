package analysis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// testStart is the fixed start time of hand-made tapes.
var testStart = time.Date(2026, 7, 28, 10, 0, 0, 0, time.UTC)

// step is one record of a hand-made tape.
type step struct {
	at    time.Duration  // since testStart
	sess  string         // "" means "1"
	dir   tape.Direction // messages: required; events: optional
	msg   string         // a message frame, or
	event string         // an event name with
	data  string         // its JSON payload
	xchg  uint64         // HTTP exchange number
	strm  string         // the stream that carried it ("post", "ws"...)
}

// onExchange returns s recorded on HTTP exchange x.
func onExchange(x uint64, s step) step { s.xchg = x; return s }

// c2s, s2c and evt build steps.
func c2s(at time.Duration, msg string) step { return step{at: at, dir: tape.ClientToServer, msg: msg} }
func s2c(at time.Duration, msg string) step { return step{at: at, dir: tape.ServerToClient, msg: msg} }
func evt(at time.Duration, name, data string) step {
	return step{at: at, event: name, data: data}
}

// inSession returns steps moved to session id.
func inSession(id string, steps ...step) []step {
	out := make([]step, len(steps))
	for i, s := range steps {
		s.sess = id
		out[i] = s
	}
	return out
}

// writeTape writes a reproducible stdio tape: fixed header time and clock.
func writeTape(t testing.TB, path string, steps []step, opts ...tape.Option) {
	t.Helper()
	writeTapeAs(t, path, "stdio", steps, opts...)
}

// writeTapeAs is writeTape with the header's transport ("stdio" or
// "http"): a tape whose steps carry HTTP exchanges is an HTTP recording.
func writeTapeAs(t testing.TB, path, transport string, steps []step, opts ...tape.Option) {
	t.Helper()
	last := time.Duration(0)
	for _, s := range steps {
		last = max(last, s.at)
	}
	end := testStart.Add(last + time.Millisecond)
	// No flush on the wall clock: the frames, and so the bytes of the
	// committed fixtures, must not depend on the machine's load.
	opts = append([]tape.Option{tape.WithClock(func() time.Time { return end }), tape.WithFlushInterval(time.Hour)}, opts...)
	w, err := tape.Create(path, tape.Header{Version: "test", Time: testStart.UnixNano(), Transport: transport, Target: "hand-made"}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range steps {
		rec := &tape.Record{Time: testStart.Add(s.at).UnixNano(), Session: s.sess, Dir: s.dir, Exchange: s.xchg, Stream: s.strm}
		if rec.Session == "" {
			rec.Session = "1"
		}
		if s.event != "" {
			rec.Type, rec.Event = tape.TypeEvent, s.event
			if s.data != "" {
				rec.Data = []byte(s.data)
			}
		} else {
			rec.Type, rec.Frame = tape.TypeMessage, []byte(s.msg)
		}
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// tempTape writes steps to a new tape in a temporary directory.
func tempTape(t testing.TB, steps ...step) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.jsonl.zst")
	writeTape(t, path, steps)
	return path
}

// scanAll returns the items of a tape, copied.
func scanAll(t *testing.T, path string, opts ...ScanOption) ([]Item, error) {
	t.Helper()
	r, err := tape.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sc, err := NewScanner(context.Background(), r, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	var out []Item
	for {
		it, err := sc.Next()
		if errors.Is(err, io.EOF) {
			return out, sc.Warning()
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, *it)
	}
}

func TestScannerSplitsBatchesAndKeepsEvents(t *testing.T) {
	path := tempTape(t,
		c2s(0, `{"jsonrpc":"2.0","id":1,"method":"ping"}`),
		c2s(1*time.Millisecond, `[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`),
		evt(2*time.Millisecond, tape.EventStderr, `{"line":"hello"}`),
		s2c(3*time.Millisecond, `not json`),
	)
	items, warn := scanAll(t, path)
	if warn != nil {
		t.Fatalf("warning on a clean tape: %v", warn)
	}
	type want struct {
		seq    int64
		kind   jsonrpc.Kind
		batch  int
		member int
		event  string
	}
	wants := []want{
		{1, jsonrpc.KindRequest, 0, -1, ""},
		{2, jsonrpc.KindBatch, 2, -1, ""},
		{2, jsonrpc.KindRequest, 2, 0, ""},
		{2, jsonrpc.KindNotification, 2, 1, ""},
		{3, jsonrpc.KindInvalid, 0, -1, tape.EventStderr},
		{4, jsonrpc.KindInvalid, 0, -1, ""},
		{5, jsonrpc.KindInvalid, 0, -1, tape.EventStats},
	}
	if len(items) != len(wants) {
		t.Fatalf("got %d items, want %d", len(items), len(wants))
	}
	for i, w := range wants {
		it := items[i]
		if it.Seq != w.seq || it.Info.Kind != w.kind || it.Batch != w.batch || it.Member != w.member || it.Rec.Event != w.event {
			t.Errorf("item %d: seq %d kind %v batch %d member %d event %q; want %+v", i, it.Seq, it.Info.Kind, it.Batch, it.Member, it.Rec.Event, w)
		}
	}
	if got := string(items[3].Frame); got != `{"jsonrpc":"2.0","method":"notifications/initialized"}` {
		t.Errorf("second member frame = %s", got)
	}
	if items[5].Info.Violations != jsonrpc.ViolationInvalidJSON {
		t.Errorf("invalid frame violations = %v", items[5].Info.Violations)
	}
}

func TestScannerOnlySession(t *testing.T) {
	var steps []step
	steps = append(steps, inSession("a", c2s(0, `{"jsonrpc":"2.0","id":1,"method":"ping"}`))...)
	steps = append(steps, inSession("b", c2s(1, `{"jsonrpc":"2.0","id":1,"method":"ping"}`), s2c(2, `{"jsonrpc":"2.0","id":1,"result":{}}`))...)
	steps = append(steps, inSession("a", s2c(3, `{"jsonrpc":"2.0","id":1,"result":{}}`))...)
	path := tempTape(t, steps...)
	items, _ := scanAll(t, path, OnlySession("b"))
	if len(items) != 2 {
		t.Fatalf("got %d items of session b, want 2", len(items))
	}
	for _, it := range items {
		if it.Rec.Session != "b" {
			t.Errorf("item of session %q", it.Rec.Session)
		}
	}
	list, warn, err := Sessions(context.Background(), path)
	if err != nil || warn != nil {
		t.Fatal(err, warn)
	}
	var ids []string
	for _, s := range list {
		ids = append(ids, s.ID)
	}
	// The writer's closing stats event belongs to no session.
	if got := strings.Join(ids, ","); got != "a,b," {
		t.Errorf("sessions = %q, want a,b, then the stats event's empty session", got)
	}
	if list[0].Messages != 2 || list[1].Messages != 2 {
		t.Errorf("message counts %d, %d; want 2, 2", list[0].Messages, list[1].Messages)
	}
}

func TestScannerManyRecordsAcrossChunks(t *testing.T) {
	var steps []step
	const n = 3*defaultChunk + 17
	for i := 0; i < n; i++ {
		steps = append(steps, c2s(time.Duration(i), `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	}
	items, _ := scanAll(t, tempTape(t, steps...))
	if len(items) != n+1 { // + stats event
		t.Fatalf("got %d items, want %d", len(items), n+1)
	}
	for i, it := range items {
		if it.Seq != int64(i+1) {
			t.Fatalf("item %d has seq %d", i, it.Seq)
		}
	}
}

func TestScannerStopsWithContext(t *testing.T) {
	var steps []step
	// More than the read-ahead holds, so that the scanner cannot have
	// read the whole tape before the cancel.
	for i := 0; i < (readAheadChunks+10)*defaultChunk; i++ {
		steps = append(steps, c2s(time.Duration(i), `{"jsonrpc":"2.0","method":"x"}`))
	}
	path := tempTape(t, steps...)
	r, err := tape.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	sc, err := NewScanner(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	if _, err := sc.Next(); err != nil {
		t.Fatal(err)
	}
	cancel()
	deadline := time.After(10 * time.Second)
	for {
		_, err := sc.Next()
		if errors.Is(err, context.Canceled) {
			return
		}
		if err != nil {
			t.Fatalf("got %v, want context.Canceled", err)
		}
		select {
		case <-deadline:
			t.Fatal("scanner did not stop after cancel")
		default:
		}
	}
}

func TestScannerCutTape(t *testing.T) {
	path := tempTape(t,
		c2s(0, `{"jsonrpc":"2.0","id":1,"method":"ping"}`),
		s2c(1, `{"jsonrpc":"2.0","id":1,"result":{}}`),
	)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(t.TempDir(), "cut.jsonl.zst")
	if err := os.WriteFile(cut, data[:len(data)-5], 0o600); err != nil {
		t.Fatal(err)
	}
	_, warn := scanAll(t, cut)
	var te *tape.TailError
	if !errors.As(warn, &te) {
		t.Fatalf("warning = %v, want a *tape.TailError", warn)
	}
}

// TestScannerYieldsInTimeOrder: items come in time order, from a tape the
// Writer put in order and from an older tape the Reader puts in order.
func TestScannerYieldsInTimeOrder(t *testing.T) {
	// The recorder wrote the response a moment before its request.
	steps := []step{
		c2s(0, `{"jsonrpc":"2.0","id":0,"method":"ping"}`),
		s2c(3*time.Millisecond, `{"jsonrpc":"2.0","id":1,"result":{}}`),
		c2s(2*time.Millisecond, `{"jsonrpc":"2.0","id":1,"method":"ping"}`),
		s2c(1*time.Millisecond, `{"jsonrpc":"2.0","id":0,"result":{}}`),
		c2s(2*time.Second, `{"jsonrpc":"2.0","method":"late"}`),
		c2s(5*time.Millisecond, `{"jsonrpc":"2.0","method":"early"}`),
	}
	for _, tc := range []struct {
		name string
		opts []tape.Option
	}{
		{name: "time-ordered tape"},
		{name: "older tape", opts: []tape.Option{tape.WithCallOrder()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "t.jsonl.zst")
			writeTape(t, path, steps, tc.opts...)
			items, _ := scanAll(t, path)
			var got []string
			for i, it := range items {
				if it.Seq != int64(i+1) {
					t.Errorf("item %d has seq %d", i, it.Seq)
				}
				if it.IsMessage() {
					got = append(got, string(it.Frame))
				}
			}
			want := []string{steps[0].msg, steps[3].msg, steps[2].msg, steps[1].msg, steps[5].msg, steps[4].msg}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("order %s, want %s", got, want)
			}
			rep, err := Inspect(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Violations) != 0 || rep.Unanswered.Count != 0 {
				t.Errorf("violations %+v, unanswered %+v", rep.Violations, rep.Unanswered)
			}
		})
	}
}
