package tape

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// embeddableOracle is validEmbeddable's specification written with the
// standard library.
func embeddableOracle(b []byte) bool {
	return len(b) > 0 && json.Valid(b) && utf8.Valid(b) &&
		!bytes.ContainsAny(b, "\n\r") && !isSpace(b[0]) && !isSpace(b[len(b)-1])
}

func TestValidEmbeddable(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, true},
		{`{ "a" : [1, 2.5e-3, -0, true, false, null, "x\u00e9\n"] }`, true},
		{"{\"a\":\t1}", true},
		{`"just a string"`, true},
		{`12`, true},
		{`[]`, true},
		{`{}`, true},
		{`"é日本"`, true},
		{"", false},
		{" {}", false},
		{"{} ", false},
		{"{}\n", false},
		{"{\n}", false},
		{"{\r}", false},
		{`{"a":1,}`, false},
		{`{"a":01}`, false},
		{`{"a":1.}`, false},
		{`{"a":.5}`, false},
		{`{"a":1e}`, false},
		{`{"a":-}`, false},
		{`{"a":"\x"}`, false},
		{`{"a":"\u12"}`, false},
		{"{\"a\":\"\x01\"}", false},
		{"\"\xff\"", false},
		{"\"\xed\xa0\x80\"", false}, // UTF-8 encoded surrogate
		{`{"a":tru}`, false},
		{`{"a" 1}`, false},
		{`{1:2}`, false},
		{`[1 2]`, false},
		{`{}{}`, false},
		{`"unterminated`, false},
		{strings.Repeat("[", 10000) + strings.Repeat("]", 10000), true},
		{strings.Repeat("[", 10001) + strings.Repeat("]", 10001), false},
	}
	for _, tt := range tests {
		got := validEmbeddable([]byte(tt.in))
		if got != tt.want {
			t.Errorf("validEmbeddable(%.60q) = %v, want %v", tt.in, got, tt.want)
		}
		if oracle := embeddableOracle([]byte(tt.in)); oracle != tt.want {
			t.Errorf("oracle(%.60q) = %v, want %v: table is wrong", tt.in, oracle, tt.want)
		}
	}
}

func FuzzValidEmbeddable(f *testing.F) {
	for _, s := range []string{`{"a":[1,2,{"b":null}]}`, `"x\u00e9"`, `-1.5E+3`, "{\"a\":\t\"\xff\"}", `[true,false]`, " 1", "1\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validEmbeddable(b), embeddableOracle(b); got != want {
			t.Fatalf("validEmbeddable(%q) = %v, oracle says %v", b, got, want)
		}
	})
}
