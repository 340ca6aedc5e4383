package analysis

import (
	"encoding/json"
	"testing"
)

func TestLookup(t *testing.T) {
	doc := `{"jsonrpc":"2.0","id":1,"params":{"name":"echo","n":-1.5e3,"nested":{"a":[1,{"b":"}"}],"t":true},"nam\u0065x":"other","s":"q\"x"},"params2":null}`
	cases := []struct {
		path []string
		want string
	}{
		{nil, doc},
		{[]string{"id"}, `1`},
		{[]string{"params", "name"}, `"echo"`},
		{[]string{"params", "n"}, `-1.5e3`},
		{[]string{"params", "nested", "a"}, `[1,{"b":"}"}]`},
		{[]string{"params", "nested", "t"}, `true`},
		{[]string{"params", "s"}, `"q\"x"`},
		{[]string{"params", "missing"}, ``},
		{[]string{"params", "name", "deeper"}, ``},
		{[]string{"params2", "x"}, ``},
	}
	for _, c := range cases {
		if got := string(lookup([]byte(doc), c.path...)); got != c.want {
			t.Errorf("lookup %v = %q, want %q", c.path, got, c.want)
		}
	}
	// "na\u006de" is "name" too: the last one wins, as in encoding/json.
	if s, ok := lookupString([]byte(`{"name":"a","na\u006de":"b"}`), "name"); !ok || s != "b" {
		t.Errorf("escaped duplicate key: %q %v", s, ok)
	}
	if s, ok := lookupString([]byte(doc), "params", "s"); !ok || s != `q"x` {
		t.Errorf("escaped string value: %q", s)
	}
	if f, ok := lookupNumber([]byte(doc), "params", "n"); !ok || f != -1500 {
		t.Errorf("number %v %v", f, ok)
	}
	if _, ok := lookupNumber([]byte(doc), "params", "name"); ok {
		t.Error("a string read as a number")
	}
	fields := make([]span, 3)
	if !topFields([]byte(doc), "params", []string{"s", "name", "none"}, fields) {
		t.Fatal("topFields found no params")
	}
	if got := string(fields[1].of([]byte(doc))); got != `"echo"` || fields[2].end != 0 || string(fields[0].of([]byte(doc))) != `"q\"x"` {
		t.Errorf("topFields: %q %+v", got, fields)
	}
}

// FuzzLookup checks that the walk never panics or loops, and that on
// valid JSON it finds what encoding/json finds.
func FuzzLookup(f *testing.F) {
	for _, s := range []string{
		`{"params":{"name":"x"}}`, `{"params":{"name":"a","name":"b"}}`, `{"params":[1,2]}`,
		`{"params":{"name":"\u0078"}}`, `{"params":{"na\"me":1,"name":{"k":[]}}}`, `{"params":`, `"`, `{"a":"\`, `[`, `{}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got := lookup(data, "params", "name")
		_, _ = stringValue(got)
		_ = skipValue(data, 0)
		if !json.Valid(data) {
			return
		}
		// Maps match keys exactly, as lookup does (structs would not).
		var top, params map[string]json.RawMessage
		if json.Unmarshal(data, &top) != nil || json.Unmarshal(top["params"], &params) != nil || params == nil {
			return // not an object with an object params: lookup may say anything but must not panic
		}
		want, ok := params["name"]
		if !ok {
			if got != nil {
				t.Fatalf("lookup found %q where encoding/json finds nothing", got)
			}
			return
		}
		if !jsonEqual(got, want) {
			t.Fatalf("lookup = %q, encoding/json = %q", got, want)
		}
	})
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}
