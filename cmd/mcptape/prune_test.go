package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/mcptape/mcptape/tape"
)

// smallTape returns a tape of one message whose header names tool.
func smallTape(t *testing.T, tool string) []byte {
	return tapeWithHeader(t, tape.Header{Tool: tool, Transport: "stdio"})
}

// tapeWithHeader returns a tape of one message with the header h.
func tapeWithHeader(t *testing.T, h tape.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := tape.NewWriter(&buf, h)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&tape.Record{Type: tape.TypeMessage, Time: 1, Session: "1", Dir: tape.ClientToServer,
		Frame: []byte(`{"jsonrpc":"2.0","method":"x"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestPruneDeletesOnlyMcptapeTapes: prune deletes an old *.jsonl.zst only
// when its start is the header of a tape mcptape wrote (recompressed by
// the zstd command as one frame too), keeps anything else of that name,
// saying why on stderr, and still exits 0.
func TestPruneDeletesOnlyMcptapeTapes(t *testing.T) {
	ours := smallTape(t, tape.ToolName)
	enc, err := zstd.NewWriter(nil, zstd.WithWindowSize(8<<20), zstd.WithSingleSegment(false))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	plain, err := zstdDecode(ours)
	if err != nil {
		t.Fatal(err)
	}
	// A header that does not end in the first MiB is not read: this one
	// keeps 2 MiB of random text, which does not compress.
	noise := make([]byte, 3<<19)
	rand.Read(noise)
	extra, err := json.Marshal(map[string]string{"noise": base64.StdEncoding.EncodeToString(noise)})
	if err != nil {
		t.Fatal(err)
	}
	huge := tapeWithHeader(t, tape.Header{Tool: tape.ToolName, Transport: "stdio", Extra: extra})
	if r, err := tape.NewReader(bytes.NewReader(huge)); err != nil { // a tape all the same
		t.Fatal(err)
	} else {
		r.Close()
	}
	for _, tc := range []struct {
		name    string
		content []byte
		deleted bool
		why     string // on stderr, for a file kept
	}{
		{"ours", ours, true, ""},
		{"recompressed", enc.EncodeAll(plain, nil), true, ""},
		{"other tool", smallTape(t, "othertool"), false, `a tape written by "othertool", not mcptape`},
		{"text", []byte("notes\n"), false, "not a tape: not zstd data"},
		{"empty", nil, false, "not a tape: empty file"},
		{"zstd ndjson", enc.EncodeAll([]byte(`{"type":"trace","x":1}`+"\n"), nil), false, `not a tape: first record is of type "trace", not a header`},
		{"header past the first MiB", huge, false, "not a tape: no header record"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, "t.jsonl.zst")
			if err := os.WriteFile(p, tc.content, 0o600); err != nil {
				t.Fatal(err)
			}
			old := time.Now().Add(-48 * time.Hour)
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
			code, out, errs := runCLI(t, "", "prune", dir, "--older-than", "24h")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errs)
			}
			_, err := os.Stat(p)
			if gone := os.IsNotExist(err); gone != tc.deleted {
				t.Fatalf("deleted %v, want %v; stdout %q, stderr %q", gone, tc.deleted, out, errs)
			}
			if tc.deleted {
				return
			}
			if want := "mcptape prune: kept " + p + ": " + tc.why; !strings.Contains(errs, want) {
				t.Errorf("stderr %q, want %q", errs, want)
			}
			if !strings.Contains(errs, "deleted 0 tapes, 0 bytes; kept 1 old file that is not an mcptape tape\n") || out != "" {
				t.Errorf("stdout %q, stderr %q: want nothing deleted, one file kept", out, errs)
			}
		})
	}
}

// zstdDecode decompresses a whole zstd stream.
func zstdDecode(b []byte) ([]byte, error) {
	dec, err := zstd.NewReader(nil)
	if err != nil {
		return nil, err
	}
	defer dec.Close()
	return dec.DecodeAll(b, nil)
}
