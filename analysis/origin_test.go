package analysis

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/tapetest"
	"github.com/mcptape/mcptape/tape"
)

// TestOriginWithoutHeaderTime: a tape written with a zero header time
// (tape.Create stamps it with the current time) whose records carry
// their own, earlier, times has its offsets counted from the first
// record: none negative, and the span is the records' (5 ms), not up to
// the writer's stats event decades later.
func TestOriginWithoutHeaderTime(t *testing.T) {
	const first, took = int64(1e6), int64(5e6)
	path := tapetest.Write(t, filepath.Join(t.TempDir(), "t.jsonl.zst"), tape.Header{Version: "test", Transport: "stdio"}, []*tape.Record{
		{Type: tape.TypeMessage, Time: first, Session: "s", Dir: tape.ClientToServer, Frame: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)},
		{Type: tape.TypeMessage, Time: first + took, Session: "s", Dir: tape.ServerToClient, Frame: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)},
	})
	rep, err := Inspect(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if tp := rep.Tape; tp.OriginNS != first || tp.DurationNS != took {
		t.Errorf("origin %d, span %d: want %d and %d", tp.OriginNS, tp.DurationNS, first, took)
	}
	var text bytes.Buffer
	if err := WriteText(&text, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"spans 5.00ms", "s  +0.000s to +0.005s (5.00ms)"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("inspect text lacks %q:\n%s", want, text.String())
		}
	}
	var show bytes.Buffer
	if _, err := Show(context.Background(), path, &show); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"+0.000s  s", "+0.005s  s"} {
		if !strings.Contains(show.String(), want) {
			t.Errorf("show text lacks %q:\n%s", want, show.String())
		}
	}
}
