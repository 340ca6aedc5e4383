package conformancetest

import (
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestUnansweredObserved checks the pairing of observed requests and
// responses: by direction and id, the latest open request first (ids
// repeat from one session to the next).
func TestUnansweredObserved(t *testing.T) {
	tests := []struct {
		name, log string
		want      map[string]int
	}{
		{"empty", "", map[string]int{}},
		{"answered", `{"dir":"c2s","method":"ping","id":"1"}
{"dir":"s2c","id":"1"}`, map[string]int{}},
		{"a later session reuses the id", `{"dir":"c2s","method":"tools/call","id":"1"}
{"dir":"c2s","method":"ping","id":"1"}
{"dir":"s2c","id":"1"}`, map[string]int{"c2s tools/call id 1": 1}},
		{"server request answered by the client", `{"dir":"c2s","method":"tools/call","id":"1"}
{"dir":"s2c","method":"sampling/createMessage","id":"1"}
{"dir":"c2s","id":"1"}
{"dir":"s2c","id":"1"}`, map[string]int{}},
		{"a response of the same direction answers nothing", `{"dir":"s2c","method":"roots/list","id":"\"a\""}
{"dir":"s2c","id":"\"a\""}`, map[string]int{`s2c roots/list id "a"`: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "observed.jsonl")
			if err := os.WriteFile(path, []byte(tt.log), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := unansweredObserved(path)
			if err != nil || !maps.Equal(got, tt.want) {
				t.Errorf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
	if got, err := unansweredObserved(filepath.Join(t.TempDir(), "none")); err != nil || len(got) != 0 {
		t.Errorf("no file: %v, %v; want nothing unanswered", got, err)
	}
}

// TestReadChecks checks how results are read and compared.
func TestReadChecks(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if content != "" {
			if err := os.WriteFile(filepath.Join(dir, name, "checks.json"), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	write("server-ping-2026-12-01T15-15-45-163Z", `[{"id":"ping","status":"SUCCESS","details":{"x":1}}]`)
	write("server-tools-list-2026-12-01T15-15-45-259Z", `[{"id":"b","status":"FAILURE","errorMessage":"dial tcp 127.0.0.1:4567: refused"},{"id":"a","status":"INFO"}]`)
	write("server-hung-2026-12-01T15-15-46-000Z", "") // started, never finished
	got, err := readChecks(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"ping":       "ping SUCCESS",
		"tools-list": `a INFO|b FAILURE "dial tcp HOST:PORT: refused"`,
	}
	if len(got) != len(want) {
		t.Fatalf("scenarios %v, want %v", got, want)
	}
	for sc, w := range want {
		var s []string
		for _, c := range got[sc] {
			s = append(s, c.String())
		}
		if strings.Join(s, "|") != w {
			t.Errorf("%s: %q, want %q", sc, strings.Join(s, "|"), w)
		}
	}
	if d := diffChecks(got["ping"], got["ping"]); d != "" {
		t.Errorf("diff of equal checks: %q", d)
	}
	if d := diffChecks(got["ping"], []check{{ID: "ping", Status: "FAILURE"}}); !strings.Contains(d, "direct only: ping SUCCESS") || !strings.Contains(d, "proxy only:  ping FAILURE") {
		t.Errorf("diff: %q", d)
	}
	write("stray", `[]`)
	if _, err := readChecks(dir); err == nil || !strings.Contains(err.Error(), "unexpected stray") {
		t.Errorf("stray directory: %v", err)
	}
}

// TestGroups: the scenarios are split in order, every one in exactly one
// group, the groups of nearly equal size and none empty.
func TestGroups(t *testing.T) {
	names := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}
	got := groups(names, 3)
	if want := [][]string{{"a", "b", "c"}, {"d", "e", "f"}, {"g", "h", "i", "j"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("groups of 10 in 3: %v, want %v", got, want)
	}
	if got := groups(names[:2], 3); !reflect.DeepEqual(got, [][]string{{"a"}, {"b"}}) {
		t.Errorf("groups of 2 in 3: %v", got)
	}
}
