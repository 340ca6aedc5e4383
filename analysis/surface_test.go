package analysis

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// surfaceOf builds a surface listing tools with the given definitions.
func surfaceOf(defs ...string) *Surface {
	s := &Surface{Format: SurfaceFormat, Listed: []string{KindTool, KindPrompt}}
	for _, d := range defs {
		name, _ := lookupString([]byte(d), "name")
		s.Tools = append(s.Tools, SurfaceItem{Name: name, Definition: json.RawMessage(d)})
	}
	s.normalize()
	return s
}

func TestDiffSurface(t *testing.T) {
	const echo = `{"name":"echo","description":"Echo","inputSchema":{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}}`
	tests := []struct {
		name     string
		old, new *Surface
		want     []string // SurfaceChange.String()
		breaking bool
	}{
		{name: "same", old: surfaceOf(echo), new: surfaceOf(echo)},
		{name: "key order and spacing do not matter", old: surfaceOf(echo),
			new: surfaceOf(`{"inputSchema":{"required":["message"], "type":"object","properties":{"message":{"type":"string"}}},"description":"Echo","name":"echo"}`)},
		{name: "added", old: surfaceOf(), new: surfaceOf(echo), want: []string{"tool echo added"}},
		{name: "removed", old: surfaceOf(echo), new: surfaceOf(), want: []string{"BREAKING tool echo removed"}, breaking: true},
		{name: "description", old: surfaceOf(echo),
			new:  surfaceOf(`{"name":"echo","description":"Echo it","inputSchema":{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}}`),
			want: []string{"tool echo changed: description"}},
		{name: "new required argument", old: surfaceOf(echo),
			new:  surfaceOf(`{"name":"echo","description":"Echo","inputSchema":{"type":"object","properties":{"message":{"type":"string"},"loud":{"type":"boolean"}},"required":["message","loud"]}}`),
			want: []string{"BREAKING tool echo changed: inputSchema: new required argument loud"}, breaking: true},
		{name: "new optional argument", old: surfaceOf(echo),
			new:  surfaceOf(`{"name":"echo","description":"Echo","inputSchema":{"type":"object","properties":{"message":{"type":"string"},"loud":{"type":"boolean"}},"required":["message"]}}`),
			want: []string{"tool echo changed: inputSchema"}},
		{name: "changed type", old: surfaceOf(echo),
			new:  surfaceOf(`{"name":"echo","description":"Echo","inputSchema":{"type":"object","properties":{"message":{"type":["string","null"]}},"required":["message"]}}`),
			want: []string{"BREAKING tool echo changed: inputSchema: argument message: type string → [string,null]"}, breaking: true},
		{name: "output type", old: surfaceOf(`{"name":"n","outputSchema":{"type":"object","properties":{"v":{"type":"integer"}}}}`),
			new:  surfaceOf(`{"name":"n","outputSchema":{"type":"object","properties":{"v":{"type":"string"}}},"annotations":{"readOnlyHint":true}}`),
			want: []string{"tool n changed: annotations", "BREAKING tool n changed: outputSchema: output field v: type integer → string"}, breaking: true},
		{name: "kind not listed is not compared", old: surfaceOf(echo), new: &Surface{Listed: []string{KindPrompt}}},
		{name: "prompt argument now required",
			old:  &Surface{Listed: []string{KindPrompt}, Prompts: []SurfaceItem{{"p", json.RawMessage(`{"name":"p","arguments":[{"name":"a"}]}`)}}},
			new:  &Surface{Listed: []string{KindPrompt}, Prompts: []SurfaceItem{{"p", json.RawMessage(`{"name":"p","arguments":[{"name":"a","required":true}]}`)}}},
			want: []string{"BREAKING prompt p changed: arguments: new required argument a"}, breaking: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			changes := DiffSurface(tt.old, tt.new)
			var got []string
			for _, c := range changes {
				got = append(got, c.String())
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("changes:\n%q\nwant:\n%q", got, tt.want)
			}
			if Breaking(changes) != tt.breaking {
				t.Errorf("breaking %v", Breaking(changes))
			}
		})
	}
}

// TestReadSurfaceRealPeers: server-everything offers the same tools over
// stdio and HTTP (tapes recorded from the real server); the surface
// written and loaded back is the same.
func TestReadSurfaceRealPeers(t *testing.T) {
	ctx := context.Background()
	a, err := ReadSurface(ctx, filepath.Join(fixtureDir, "everything-stdio.jsonl.zst"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReadSurface(ctx, filepath.Join(fixtureDir, "everything-http.jsonl.zst"))
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Tools) < 10 || !slices.Equal(a.Listed, []string{KindTool}) || a.Server == nil {
		t.Fatalf("surface: %d tools, listed %v, server %v", len(a.Tools), a.Listed, a.Server)
	}
	if d := DiffSurface(a, b); len(d) != 0 {
		t.Errorf("stdio and HTTP differ: %v", d)
	}
	var buf bytes.Buffer
	if err := WriteSurface(&buf, a); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "b.json")
	writeFile(t, path, buf.Bytes())
	back, err := LoadSurface(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if d := DiffSurface(a, back); len(d) != 0 || len(back.Tools) != len(a.Tools) {
		t.Errorf("loaded back: %v", d)
	}
	writeFile(t, path, []byte(`{"format":99}`))
	if _, err := LoadSurface(ctx, path); err == nil {
		t.Error("a file of another format loads")
	}
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
