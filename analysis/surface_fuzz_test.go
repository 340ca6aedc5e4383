package analysis

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoadSurface: any file given to diff --surface or check --baseline
// is read or refused with an error, never a panic; a baseline that loads
// equals itself, is written back (WriteSurface) as a baseline that loads
// and equals it, and compares with an empty surface either way round.
func FuzzLoadSurface(f *testing.F) {
	f.Add([]byte(`{"format":1,"tools":[{"name":"echo","definition":{"name":"echo","inputSchema":{"type":"object","required":["m"],"properties":{"m":{"type":"string"}}}}}],"prompts":[],"resources":[],"resource_templates":[],"listed":["tool"]}`))
	f.Add([]byte(`{"format":1,"tools":[{"name":"a","definition":null},{"name":"a","definition":[1]}],"listed":["tool","prompt"]}`))
	f.Add([]byte(`{"format":1,"prompts":[{"name":"p","definition":{"arguments":[{"name":"x","required":true},7]}}],"listed":["prompt"]}`))
	f.Add([]byte(`{"format":2}`))
	f.Add([]byte("not json"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "baseline.json")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := LoadSurface(context.Background(), p)
		if err != nil {
			return
		}
		if ch := DiffSurface(s, s); len(ch) != 0 {
			t.Fatalf("a baseline differs from itself: %v", ch)
		}
		var buf bytes.Buffer
		if err := WriteSurface(&buf, s); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		again, err := LoadSurface(context.Background(), p)
		if err != nil {
			t.Fatalf("a written baseline does not load: %v\n%s", err, buf.Bytes())
		}
		if ch := DiffSurface(s, again); len(ch) != 0 {
			t.Fatalf("a baseline written and read back differs: %v", ch)
		}
		empty := &Surface{Format: SurfaceFormat, Listed: s.Listed}
		empty.normalize()
		_ = DiffSurface(s, empty)
		_ = DiffSurface(empty, s)
		_ = NotCompared(s, empty)
	})
}
