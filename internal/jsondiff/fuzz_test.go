package jsondiff

import (
	"encoding/json"
	"testing"
)

// FuzzCompare checks that the parser agrees with encoding/json on validity,
// that Compare never panics, that a value equals itself, and that the
// differences of a and b mirror those of b and a.
func FuzzCompare(f *testing.F) {
	seeds := [][2]string{
		{`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}`, `{"jsonrpc":"2.0","id":2,"result":{"content":[]}}`},
		{`[1,1.0,1e2,-0,"\u0061"]`, `[1,1,100,0,"a"]`},
		{`{"a":1,"a":2}`, `{"a":{"b":[null,true,false]}}`},
		{`{"\u006b":"x","_meta":{}}`, `{"k":"y"}`},
		{`9007199254740993`, `9.007199254740993e15`},
		{`"a`, `{`},
		{` {"a" : [ ] } `, `{}`},
		{`0.000`, `-0e5`},
	}
	for _, s := range seeds {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	c, err := New(WithIgnore("x.*", "**.y[*]", "[0]"), WithMaxDiffs(1000))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var p parser
		errA := p.parse(a)
		if (errA == nil) != json.Valid(a) {
			t.Fatalf("parse(%q) = %v, json.Valid = %v", a, errA, json.Valid(a))
		}
		if errA == nil {
			d, err := c.Compare(a, a)
			if err != nil || len(d) != 0 {
				t.Fatalf("Compare(x, x) = %v, %v", d, err)
			}
		}
		ab, errAB := c.Compare(a, b)
		ba, errBA := c.Compare(b, a)
		if (errAB == nil) != (errBA == nil) {
			t.Fatalf("errors differ: %v / %v", errAB, errBA)
		}
		if errAB != nil || len(ab) >= 1000 {
			return
		}
		if len(ab) != len(ba) {
			t.Fatalf("Compare(a,b) has %d differences, Compare(b,a) %d", len(ab), len(ba))
		}
		for _, d := range ab {
			if d.Kind == Changed || d.Kind == TypeChanged {
				if d.Old == nil || d.New == nil {
					t.Fatalf("%v lacks a side", d)
				}
			}
			_ = d.String()
		}
	})
}

// FuzzPattern checks that compiling any ignore pattern gives a pattern or
// an error, never a panic, and that a compiled pattern can be used.
func FuzzPattern(f *testing.F) {
	for _, s := range []string{"id", "**._meta", "result.content[*].text", `["a.b"][0]`, "a.*.b", "[", `["\"]`, "a..b", "**"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := New(WithoutDefaults(), WithIgnore(s))
		if err != nil {
			if c != nil {
				t.Fatal("a Comparer with an error")
			}
			return
		}
		if _, err := c.Compare([]byte(`{"a":[{"b":1}],"a.b":[2]}`), []byte(`{"a":[{"b":2}],"x":{}}`)); err != nil {
			t.Fatal(err)
		}
	})
}
