package analysis

import (
	"bytes"
	"context"
	"fmt"
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

// TestOriginOtherOutputs: diff, the HTML report and export count from the
// same origin as inspect: a tape whose header has no time (tape.Create
// stamps the current time, decades after its records) gives offsets from
// the first record, and spans that end with the records, not at the
// writer's stats event.
func TestOriginOtherOutputs(t *testing.T) {
	const ms = int64(1e6)
	dir := t.TempDir()
	recs := []*tape.Record{
		{Type: tape.TypeMessage, Time: 1 * ms, Session: "s", Dir: tape.ClientToServer, Frame: []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)},
		{Type: tape.TypeMessage, Time: 6 * ms, Session: "s", Dir: tape.ServerToClient, Frame: []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`)},
		{Type: tape.TypeMessage, Time: 7 * ms, Session: "s", Dir: tape.ClientToServer, Frame: []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)},
	}
	h := tape.Header{Version: "test", Transport: "stdio"}
	a := tapetest.Write(t, filepath.Join(dir, "a.jsonl.zst"), h, recs)
	b := tapetest.Write(t, filepath.Join(dir, "b.jsonl.zst"), h, recs[:2])
	tests := []struct {
		name string
		run  func(t *testing.T) string
		want []string
		not  []string
	}{
		{name: "diff", run: func(t *testing.T) string {
			rep, err := Diff(context.Background(), a, b)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := WriteDiffText(&out, rep); err != nil {
				t.Fatal(err)
			}
			return out.String()
		}, want: []string{"record 3 at +0.006s"}, not: []string{" at -"}},
		{name: "report", run: func(t *testing.T) string {
			out, _ := writeReport(t, a, "origin")
			return string(out)
		}, want: []string{"ping: answered at +0.000s, 5.00ms", "tools/list at +0.006s: never answered"}, not: []string{"at -"}},
		{name: "ndjson", run: func(t *testing.T) string {
			out, _ := export(t, a, ExportNDJSON)
			return string(out)
		}, want: []string{`"offset_ns":0,`, `"offset_ns":5000000,`, `"offset_ns":6000000,`}, not: []string{`"offset_ns":-`}},
		{name: "otlp", run: func(t *testing.T) string {
			out, _ := export(t, a, ExportOTLP)
			var s strings.Builder
			for _, sp := range parseOTLP(t, out).ResourceSpans[0].ScopeSpans[0].Spans {
				fmt.Fprintf(&s, "%s %d-%d\n", sp.Name, sp.StartTimeUnixNano, sp.EndTimeUnixNano)
			}
			return s.String()
		}, want: []string{"ping 1000000-6000000\n", "tools/list 7000000-7000000\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.run(t)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("lacks %q:\n%s", w, got)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("holds %q:\n%s", n, got)
				}
			}
		})
	}
}
