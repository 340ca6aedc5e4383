package check

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/analysis"
	"github.com/mcptape/mcptape/internal/tapetest"
	"github.com/mcptape/mcptape/tape"
)

// rotatedSession writes a session of one server over two tapes of a
// rotated recording, the answer to tools/list (no tools) in the second,
// and returns their paths.
func rotatedSession(t *testing.T) []string {
	t.Helper()
	now := time.Now()
	return tapetest.WriteRotated(t, filepath.Join(t.TempDir(), "api.jsonl.zst"), tape.Header{Version: "test", Transport: "stdio"},
		tapetest.Messages("s1", now,
			`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`,
			`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`> {"jsonrpc":"2.0","id":2,"method":"tools/list"}`),
		tapetest.Messages("s1", now.Add(time.Second), `< {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`))
}

// TestRunTapesJoined: the files of a Tape are inspected and compared with
// the baseline as one recording: the request answered in the next tape is
// answered, the tools listed there are the surface (a baseline tool the
// server no longer lists is drift); the first file alone has the request
// unanswered and no tools listed (not compared).
func TestRunTapesJoined(t *testing.T) {
	paths := rotatedSession(t)
	base := &analysis.Surface{Format: analysis.SurfaceFormat, Listed: []string{analysis.KindTool},
		Tools: []analysis.SurfaceItem{{Name: "echo", Definition: json.RawMessage(`{"name":"echo"}`)}}}
	for _, tt := range []struct {
		name   string
		tape   Tape
		failed []string
	}{
		{"joined", Tape{Name: "the recording", Paths: paths}, []string{SignalDrift}},
		{"first tape", Tape{Name: paths[0], Paths: paths[:1]}, []string{SignalUnanswered}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := RunTapes(context.Background(), []Tape{tt.tape}, WithBaseline(base))
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Errors) != 0 || !slices.Equal(res.Tapes, []string{tt.tape.Name}) || res.Sessions != 1 {
				t.Fatalf("errors %+v, tapes %q, %d sessions: want none, the tape's name, 1", res.Errors, res.Tapes, res.Sessions)
			}
			if got := fired(res, false); !slices.Equal(got, tt.failed) {
				t.Errorf("failed %q, want %q", got, tt.failed)
			}
			for _, c := range res.Cases {
				if c.Tape != tt.tape.Name {
					t.Errorf("case %s of tape %q, want %q", c.Name, c.Tape, tt.tape.Name)
				}
			}
		})
	}
}

// TestRunTapesGap: a recording read joined with a tape missing from its
// numbers, or with a damaged tape before its last, has lost records: the
// incomplete signal fires, as for one cut tape. It did not: the join's
// note about the hole was only a proxy error, and check --fail-on
// incomplete passed. A writer's own gap marker (records lost to a write
// error) fires it too.
func TestRunTapesGap(t *testing.T) {
	now := time.Now()
	part := func(i int) []*tape.Record {
		return tapetest.Messages("s1", now.Add(time.Duration(i)*time.Second),
			fmt.Sprintf(`> {"jsonrpc":"2.0","id":%d,"method":"ping"}`, i), fmt.Sprintf(`< {"jsonrpc":"2.0","id":%d,"result":{}}`, i))
	}
	paths := tapetest.WriteRotated(t, filepath.Join(t.TempDir(), "api.jsonl.zst"), tape.Header{Version: "test", Transport: "stdio"},
		part(1), part(2), part(3))
	damaged := slices.Clone(paths)
	data, err := os.ReadFile(paths[1])
	if err != nil {
		t.Fatal(err)
	}
	damaged[1] = filepath.Join(t.TempDir(), filepath.Base(paths[1]))
	if err := os.WriteFile(damaged[1], data[:len(data)-5], 0o600); err != nil { // its last frame cut
		t.Fatal(err)
	}
	gapMarker := writeRecords(t, "stdio", append(part(1), &tape.Record{Type: tape.TypeEvent, Time: now.Add(2 * time.Second).UnixNano(),
		Event: tape.EventError, Data: json.RawMessage(`{"error":"tape gap: 3 records not recorded","gap":{"lost":3,"from":1,"to":2,"cause":"disk full"}}`)})...)
	for _, tt := range []struct {
		name string
		tape Tape
		want string // the incomplete case's message, "" when it holds
	}{
		{"whole", Tape{Name: "whole", Paths: paths}, ""},
		{"missing", Tape{Name: "missing", Paths: []string{paths[0], paths[2]}}, "records missing at 1 place"},
		{"damaged", Tape{Name: "damaged", Paths: damaged}, "records missing at 1 place"},
		{"gap marker", Tape{Name: gapMarker, Paths: []string{gapMarker}}, "records missing at 1 place"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res, err := RunTapes(context.Background(), []Tape{tt.tape}, WithFailOn(SignalIncomplete))
			if err != nil {
				t.Fatal(err)
			}
			if res.Failed() != (tt.want != "") {
				t.Errorf("failed %v, want %v: %+v", res.Failed(), tt.want != "", res.Cases)
			}
			for _, c := range res.Cases {
				if c.Signal == SignalIncomplete && !strings.HasPrefix(c.Message, tt.want) {
					t.Errorf("incomplete: %q, want %q", c.Message, tt.want)
				}
			}
		})
	}
}
