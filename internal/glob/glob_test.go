package glob

import "testing"

func TestRegexp(t *testing.T) {
	for _, tc := range []struct {
		glob, s string
		match   bool
	}{
		{"tools/*", "tools/call", true},
		{"*", "notifications/tools/list_changed", true}, // * crosses slashes
		{"tools/*", "prompts/get", false},
		{"tools/c?ll", "tools/call", true},
		{"tools/c?ll", "tools/caall", false},
		{"[pt]*/list", "tools/list", true},
		{"[!pt]*/list", "tools/list", false},
		{"a.b", "axb", false}, // metacharacters match themselves
		{"ping", "ping2", false},
	} {
		re, err := Regexp(tc.glob)
		if err != nil {
			t.Fatalf("%q: %v", tc.glob, err)
		}
		if got := re.MatchString(tc.s); got != tc.match {
			t.Errorf("%q ~ %q = %v, want %v", tc.glob, tc.s, got, tc.match)
		}
	}
	if _, err := Regexp("tools/[x"); err == nil {
		t.Error("unterminated class accepted")
	}
}
