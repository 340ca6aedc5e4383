package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/mcptape/mcptape/tape"
)

// writeBombTape writes a tape made of a valid header frame and one zstd
// frame of 400 MiB of 'A' with no newline: a few hundred KB on disk (F3).
func writeBombTape(t *testing.T) string {
	t.Helper()
	var out bytes.Buffer
	w, err := tape.NewWriter(&out, tape.Header{Tool: "mcptape", Transport: "stdio"})
	if err != nil {
		t.Fatal(err)
	}
	hdr := bytes.Clone(out.Bytes()) // NewWriter wrote the header frame
	w.Close()
	out.Reset()
	out.Write(hdr)
	enc, err := zstd.NewWriter(&out, zstd.WithEncoderLevel(zstd.SpeedFastest))
	if err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte("A"), 4<<20)
	for range 100 {
		enc.Write(chunk)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "bomb.jsonl.zst")
	if err := os.WriteFile(path, out.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestBombTapeMemory: a tape that decompresses to far more than the record
// limit costs every analysis command, and replay, well under 256 MiB of
// allocations: the reader refuses the line before holding it.
func TestBombTapeMemory(t *testing.T) {
	bomb := writeBombTape(t)
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
	}{
		{"inspect", []string{"inspect", bomb}},
		{"show", []string{"show", bomb}},
		{"diff", []string{"diff", bomb, bomb}},
		{"export", []string{"export", bomb, "--format", "ndjson", "-o", filepath.Join(dir, "x.ndjson")}},
		{"report", []string{"report", bomb, "-o", filepath.Join(dir, "r.html")}},
		{"replay", []string{"replay", bomb, "--", "/nonexistent/server"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			code, _, stderr := runCLI(t, "", tt.args...)
			runtime.ReadMemStats(&after)
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 256<<20 {
				t.Errorf("allocated %d MiB, want under 256 MiB (exit %d, stderr %q)", alloc>>20, code, stderr)
			}
			if !bytes.Contains([]byte(stderr), []byte("not a JSON object")) {
				t.Errorf("exit %d, stderr %q: want the line refused", code, stderr)
			}
		})
	}
}
