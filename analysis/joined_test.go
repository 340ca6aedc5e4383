package analysis

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/tapetest"
	"github.com/mcptape/mcptape/tape"
)

// TestInspectJoined: the files of a rotated recording are inspected, and
// their surface read, as one tape under the name given: the request asked
// in the first file is answered in the second, whose tools are the
// surface; one file reads as Inspect reads it; a file that is not a tape
// is an error naming it.
func TestInspectJoined(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	paths := tapetest.WriteRotated(t, filepath.Join(t.TempDir(), "api.jsonl.zst"), tape.Header{Version: "test", Transport: "stdio"},
		tapetest.Messages("s1", now,
			`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`,
			`> {"jsonrpc":"2.0","id":2,"method":"tools/list"}`),
		tapetest.Messages("s1", now.Add(time.Second), `< {"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"echo"}]}}`))

	rep, err := InspectJoined(ctx, "the recording", paths)
	if err != nil {
		t.Fatal(err)
	}
	if rep.File != "the recording" || len(rep.Sessions) != 1 || rep.Unanswered.Count != 0 {
		t.Errorf("joined: file %q, %d sessions, %d unanswered; want the name, 1, 0", rep.File, len(rep.Sessions), rep.Unanswered.Count)
	}
	s, err := ReadSurfaceJoined(ctx, "the recording", paths)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tools) != 1 || s.Tools[0].Name != "echo" {
		t.Errorf("joined surface: tools %+v, want echo", s.Tools)
	}

	one, err := InspectJoined(ctx, paths[0], paths[:1])
	if err != nil {
		t.Fatal(err)
	}
	alone, err := Inspect(ctx, paths[0])
	if err != nil {
		t.Fatal(err)
	}
	if one.File != paths[0] || one.Unanswered.Count != 1 || alone.Unanswered.Count != 1 {
		t.Errorf("one file: file %q, %d and %d unanswered; want the path, 1", one.File, one.Unanswered.Count, alone.Unanswered.Count)
	}

	bad := filepath.Join(t.TempDir(), "bad.jsonl.zst")
	if err := os.WriteFile(bad, []byte("not a tape"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = InspectJoined(ctx, "the recording", append(paths[:1:1], bad))
	if !errors.Is(err, tape.ErrNotTape) || !strings.Contains(err.Error(), bad) {
		t.Errorf("a file that is not a tape: %v, want ErrNotTape naming %s", err, bad)
	}
}
