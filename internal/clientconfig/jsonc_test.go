package clientconfig

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestParseJSONC: comments and trailing commas are accepted, spans point
// at the values, and malformed documents are errors with an offset.
func TestParseJSONC(t *testing.T) {
	doc := `// c
{"a": [1, "x\"y", true,], /* b */ "b": {"c": null,},}`
	v, err := parseJSONC([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	a := v.get("a")
	if a == nil || len(a.elems) != 3 || a.elems[1].str != `x"y` || doc[a.elems[1].start:a.elems[1].end] != `"x\"y"` {
		t.Fatalf("a = %+v", a)
	}
	if c := v.get("b").get("c"); c == nil || doc[c.start:c.end] != "null" {
		t.Fatalf("b.c = %+v", c)
	}
	for _, bad := range []string{``, `{`, `{"a" 1}`, `{"a": 1 "b": 2}`, `[1,,]`, `"x`, `{} x`, `/* x`, `{a: 1}`, `[tru]`, strings.Repeat("[", maxDepth+1)} {
		if _, err := parseJSONC([]byte(bad)); err == nil || !strings.HasPrefix(err.Error(), "offset ") {
			t.Errorf("%.20q: error %v, want one with an offset", bad, err)
		}
	}
}

// FuzzParseJSONC: the parser never panics, accepts every document that
// encoding/json accepts, and its spans cut out values that decode the
// same.
func FuzzParseJSONC(f *testing.F) {
	for _, s := range []string{`{"mcpServers": {"a": {"command": "x", "args": ["y"]}}}`, `[1, 2.5e3, -0, null]`, "// x\n{\"a\": /* y */ 1,}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		v, err := parseJSONC([]byte(doc))
		if json.Valid([]byte(doc)) && err != nil {
			t.Fatalf("valid JSON rejected: %v", err)
		}
		if err != nil || v.kind != kindObject {
			return
		}
		for _, m := range v.members {
			var x any
			if json.Valid([]byte(doc)) && json.Unmarshal([]byte(doc[m.val.start:m.val.end]), &x) != nil {
				t.Fatalf("span of %q is not a value: %q", m.key, doc[m.val.start:m.val.end])
			}
		}
	})
}
