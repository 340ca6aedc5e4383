// Package tapetest writes and reads tapes for tests: records to a new tape
// file, a rotated recording's tapes, the messages of a session from a
// short notation, the records of a tape file. It serves the tests that
// write tapes and read them back (tape's own external tests, check, mock,
// cmd/mcptape), so that each does not grow its own create-write-close or
// open-read-all helper. Every failure fails the test.
package tapetest

import (
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/tape"
)

// Write writes recs to a new tape at path with header h (tape.Create and
// opts), closes it and returns path.
func Write(tb testing.TB, path string, h tape.Header, recs []*tape.Record, opts ...tape.Option) string {
	tb.Helper()
	w, err := tape.Create(path, h, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	writeAll(tb, w, recs)
	if err := w.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// Read returns the header of the tape at path and its records, or only
// those of the given types.
func Read(tb testing.TB, path string, types ...tape.Type) (tape.Header, []*tape.Record) {
	tb.Helper()
	r, err := tape.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Close()
	var recs []*tape.Record
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return *r.Header(), recs
		}
		if err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		if len(types) == 0 || slices.Contains(types, rec.Type) {
			recs = append(recs, rec)
		}
	}
}

// writeAll writes recs with w (a tape.Writer or tape.Rotator).
func writeAll(tb testing.TB, w interface{ Write(*tape.Record) error }, recs []*tape.Record) {
	tb.Helper()
	for _, rec := range recs {
		if err := w.Write(rec); err != nil {
			tb.Fatal(err)
		}
	}
}

// WriteRotated writes a rotated recording (tape.NewRotator) whose series
// base names ("DIR/NAME.jsonl.zst", as tape.RotateConfig.Base), each part
// of records in a tape of its own (the recording rotated between parts),
// and returns the paths of its tapes in order.
func WriteRotated(tb testing.TB, base string, h tape.Header, parts ...[]*tape.Record) []string {
	tb.Helper()
	r, err := tape.NewRotator(tape.RotateConfig{Base: base, Header: h})
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Close()
	for i, part := range parts {
		if i > 0 {
			if err := r.Rotate(); err != nil {
				tb.Fatal(err)
			}
		}
		writeAll(tb, r, part)
	}
	if err := r.Close(); err != nil {
		tb.Fatal(err)
	}
	segs, err := tape.ListSeries(filepath.Dir(base), strings.TrimSuffix(filepath.Base(base), tape.Ext))
	if err != nil {
		tb.Fatal(err)
	}
	if len(segs) != len(parts) {
		tb.Fatalf("rotated recording %s: %d tapes, want %d", base, len(segs), len(parts))
	}
	paths := make([]string, len(segs))
	for i, s := range segs {
		paths[i] = s.Path
	}
	return paths
}

// Messages returns the message records of session from lines "> FRAME"
// (client to server) and "< FRAME" (server to client), the first at
// start, the next ones a millisecond apart.
func Messages(session string, start time.Time, lines ...string) []*tape.Record {
	recs := make([]*tape.Record, len(lines))
	for i, l := range lines {
		dir := tape.ClientToServer
		if strings.HasPrefix(l, "<") {
			dir = tape.ServerToClient
		}
		recs[i] = &tape.Record{Type: tape.TypeMessage, Time: start.Add(time.Duration(i) * time.Millisecond).UnixNano(),
			Session: session, Dir: dir, Frame: []byte(strings.TrimSpace(l[1:]))}
	}
	return recs
}
