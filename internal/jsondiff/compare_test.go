package jsondiff

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	type diff struct {
		path string
		kind Kind
		old  string
		new  string
	}
	tests := []struct {
		name string
		opts []Option
		a, b string
		want []diff
	}{
		{name: "equal", a: `{"a":1,"b":[1,2]}`, b: `{"b":[1,2],"a":1}`},
		{name: "numbers by value", a: `[1,1.0,100,0.05,-0,1e400]`, b: `[1.0,1e0,1e2,5e-2,0,10e399]`},
		{name: "big integers exact", a: `9007199254740993`, b: `9007199254740992`,
			want: []diff{{"", Changed, `9007199254740993`, `9007199254740992`}}},
		{name: "string escapes", a: `{"k":"a\u00e9"}`, b: `{"\u006b":"aé"}`},
		{name: "changed leaf", a: `{"result":{"content":[{"type":"text","text":"hello"}]}}`,
			b:    `{"result":{"content":[{"type":"text","text":"hullo"}]}}`,
			want: []diff{{"result.content[0].text", Changed, `"hello"`, `"hullo"`}}},
		{name: "added removed", a: `{"a":1,"b":2}`, b: `{"a":1,"c":3}`,
			want: []diff{{"b", Removed, `2`, ``}, {"c", Added, ``, `3`}}},
		{name: "type", a: `{"a":"1"}`, b: `{"a":1}`, want: []diff{{"a", TypeChanged, `"1"`, `1`}}},
		{name: "bool change", a: `true`, b: `false`, want: []diff{{"", Changed, `true`, `false`}}},
		{name: "array lengths", a: `[1,2,3]`, b: `[1]`,
			want: []diff{{"[1]", Removed, `2`, ``}, {"[2]", Removed, `3`, ``}}},
		{name: "array grows", a: `[]`, b: `[{"x":1}]`, want: []diff{{"[0]", Added, ``, `{"x":1}`}}},
		{name: "duplicate key last wins", a: `{"a":1,"a":2}`, b: `{"a":2}`},
		{name: "duplicate key differs", a: `{"a":2,"a":1}`, b: `{"a":2}`, want: []diff{{"a", Changed, `1`, `2`}}},
		{name: "escaped keys", a: `{"\u0061":1,"b":2}`, b: `{"b":2,"a":3}`, want: []diff{{"a", Changed, `1`, `3`}}},
		{name: "reordered keys added", a: `{"x":1,"y":2,"z":3}`, b: `{"z":3,"w":0,"x":1}`, want: []diff{{"y", Removed, `2`, ``}, {"w", Added, ``, `0`}}},
		{name: "default id ignored", a: `{"jsonrpc":"2.0","id":1,"result":{}}`, b: `{"jsonrpc":"2.0","id":"x","result":{}}`},
		{name: "default meta ignored", a: `{"params":{"_meta":{"progressToken":1},"x":1}}`, b: `{"params":{"x":1}}`},
		{name: "default deep ids", a: `{"result":{"task":{"taskId":"a","status":"working","createdAt":"t1"}}}`,
			b:    `{"result":{"task":{"taskId":"b","status":"done","createdAt":"t2"}}}`,
			want: []diff{{"result.task.status", Changed, `"working"`, `"done"`}}},
		{name: "without defaults", opts: []Option{WithoutDefaults()}, a: `{"id":1}`, b: `{"id":2}`,
			want: []diff{{"id", Changed, `1`, `2`}}},
		{name: "ignore wildcard index", opts: []Option{WithIgnore("result.content[*].text")},
			a:    `{"result":{"content":[{"text":"a","type":"text"},{"text":"b","type":"text"}]}}`,
			b:    `{"result":{"content":[{"text":"c","type":"text"},{"text":"d","type":"image"}]}}`,
			want: []diff{{"result.content[1].type", Changed, `"text"`, `"image"`}}},
		{name: "ignore exact index", opts: []Option{WithIgnore("[1]")}, a: `[1,2,3]`, b: `[1,5]`,
			want: []diff{{"[2]", Removed, `3`, ``}}},
		{name: "ignore star key", opts: []Option{WithIgnore("a.*.v")}, a: `{"a":{"x":{"v":1,"w":1}}}`, b: `{"a":{"x":{"v":2,"w":2}}}`,
			want: []diff{{"a.x.w", Changed, `1`, `2`}}},
		{name: "ignore quoted key", opts: []Option{WithIgnore(`["a.b"]`)}, a: `{"a.b":1,"c":1}`, b: `{"a.b":2,"c":2}`,
			want: []diff{{"c", Changed, `1`, `2`}}},
		{name: "ignore everything", opts: []Option{WithIgnore("**")}, a: `[1]`, b: `{"x":2}`},
		{name: "ignore added member", opts: []Option{WithIgnore("extra")}, a: `{"a":1}`, b: `{"a":1,"extra":{}}`},
		{name: "quoted path rendering", a: `{"a b":{"c.d":1}}`, b: `{"a b":{"c.d":2}}`,
			want: []diff{{`["a b"]["c.d"]`, Changed, `1`, `2`}}},
		{name: "large objects", a: bigObject(40, 0), b: bigObject(40, 7),
			want: []diff{{"k7", Changed, `7`, `-7`}}},
		{name: "whitespace kept in raw", a: "{\"a\": [1, 2]}", b: `{"a":[1,3]}`,
			want: []diff{{"a[1]", Changed, `2`, `3`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Compare([]byte(tt.a), []byte(tt.b))
			if err != nil {
				t.Fatal(err)
			}
			var gotD []diff
			for _, d := range got {
				gotD = append(gotD, diff{d.Path, d.Kind, string(d.Old), string(d.New)})
			}
			if !reflect.DeepEqual(gotD, tt.want) {
				t.Errorf("Compare\n got %+v\nwant %+v", gotD, tt.want)
			}
			eq, err := c.Equal([]byte(tt.a), []byte(tt.b))
			if err != nil || eq != (len(tt.want) == 0) {
				t.Errorf("Equal = %v, %v; want %v", eq, err, len(tt.want) == 0)
			}
		})
	}
}

// bigObject returns an object of n members k0..kn-1 in reverse order, the
// member changed (if > 0) negated.
func bigObject(n, changed int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := n - 1; i >= 0; i-- {
		v := i
		if i == changed && changed > 0 {
			v = -i
		}
		b.WriteString(`"k` + itoa(i) + `":` + itoa(v))
		if i > 0 {
			b.WriteByte(',')
		}
	}
	b.WriteByte('}')
	return b.String()
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestCompareErrors(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		a, b, want string
	}{
		{`{"a":}`, `{}`, "old value: invalid JSON at offset 5"},
		{`{}`, `[1,]`, "new value: invalid JSON at offset 3"},
		{`{} x`, `{}`, "after the value"},
		{`"a`, `{}`, "unexpected end of input"},
		{`01`, `{}`, "offset 1"},
		{"\"\x01\"", `{}`, "control character"},
	}
	for _, tt := range tests {
		_, err := c.Compare([]byte(tt.a), []byte(tt.b))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Compare(%q, %q) error = %v, want %q", tt.a, tt.b, err, tt.want)
		}
	}
}

func TestMaxDiffs(t *testing.T) {
	c, err := New(WithMaxDiffs(2))
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.Compare([]byte(`[1,2,3,4]`), []byte(`[5,6,7,8]`))
	if err != nil || len(d) != 2 || d[1].Path != "[1]" {
		t.Fatalf("got %v, %v; want the first 2 differences", d, err)
	}
	if _, err := New(WithMaxDiffs(0)); err == nil {
		t.Error("WithMaxDiffs(0) accepted")
	}
}

func TestPatterns(t *testing.T) {
	tests := []struct {
		pat     string
		match   []string // paths (as steps) that it matches
		nomatch []string
		bad     bool
	}{
		{pat: "id", match: []string{`{"id":1}`}, nomatch: []string{`{"x":{"id":1}}`}},
		{pat: "**.id", match: []string{`{"id":1}`, `{"x":{"id":1}}`, `[{"id":1}]`}},
		{pat: "a[*]", match: []string{`{"a":[1]}`}, nomatch: []string{`{"a":{"b":1}}`}},
		{pat: "a.*", match: []string{`{"a":[1]}`, `{"a":{"b":1}}`}},
		{pat: "a.**.**.z", match: []string{`{"a":{"z":1}}`, `{"a":[{"b":{"z":1}}]}`}},
		{pat: "a.**.z", match: []string{`{"a":{"z":1}}`, `{"a":[[{"z":1}]]}`}, nomatch: []string{`{"b":{"z":1}}`}},
		{pat: "", bad: true},
		{pat: "a.", bad: true},
		{pat: "a..b", bad: true},
		{pat: "a[", bad: true},
		{pat: "a[x]", bad: true},
		{pat: "a[-1]", bad: true},
		{pat: "a b", bad: true},
		{pat: `["a`, bad: true},
	}
	for _, tt := range tests {
		c, err := New(WithoutDefaults(), WithIgnore(tt.pat))
		if tt.bad {
			if err == nil {
				t.Errorf("pattern %q accepted", tt.pat)
			}
			continue
		}
		if err != nil {
			t.Fatalf("pattern %q: %v", tt.pat, err)
		}
		// A document compared with its leaves changed: the pattern must hide
		// exactly the leaves it names.
		for _, doc := range tt.match {
			changed := strings.ReplaceAll(doc, "1", "2")
			if d, _ := c.Compare([]byte(doc), []byte(changed)); len(d) != 0 {
				t.Errorf("pattern %q does not hide %s: %v", tt.pat, doc, d)
			}
		}
		for _, doc := range tt.nomatch {
			changed := strings.ReplaceAll(doc, "1", "2")
			if d, _ := c.Compare([]byte(doc), []byte(changed)); len(d) == 0 {
				t.Errorf("pattern %q hides %s", tt.pat, doc)
			}
		}
	}
}

func TestRender(t *testing.T) {
	c, err := New()
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 300)
	d, err := c.Compare([]byte(`{"a":"hello","b":"1","c":"`+long+`","gone":[1,2]}`),
		[]byte(`{"a":"hullo","b":1,"c":"y","new":{"k":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := Render(&b, d, "  ", 80); err != nil {
		t.Fatal(err)
	}
	want := `  - a: "hello"
  + a: "hullo"
  ~ b: "1" → 1 (string → number)
  - c: "` + strings.Repeat("x", 59) + `… (302 bytes)
  + c: "y"
  - gone: [1,2]
  + new: {"k":true}
`
	if b.String() != want {
		t.Errorf("Render:\n%s\nwant:\n%s", b.String(), want)
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if n := len([]rune(line)); n > 80 {
			t.Errorf("line of %d runes: %q", n, line)
		}
	}
	if s := (Difference{Kind: Added, New: []byte(`1`)}).String(); s != "+ (root): 1" {
		t.Errorf("String() = %q", s)
	}
}
