package glob

import (
	"path"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzRegexp holds the method patterns to path.Match, the reference glob,
// where the two agree on the syntax: patterns and names without '/' (which
// path.Match's '*' does not cross and ours does), '\' (path.Match's
// escape) or '!' (our class complement, '^' in path.Match), in valid
// UTF-8. Wherever both take the pattern, they match the
// same names; control characters, newlines included, are characters like
// any other.
func FuzzRegexp(f *testing.F) {
	for _, s := range [][2]string{{"tools*", "toolscall"}, {"t?ol", "tool"}, {"[pt]*", "ping"}, {"*", "a\nb"}, {"a?c", "a\nc"}, {"[^a]", "b"}, {"[a-c]x", "bx"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		if len(pattern) > 64 || len(name) > 64 || strings.ContainsAny(pattern+name, `/\!`) || !utf8.ValidString(pattern) || !utf8.ValidString(name) {
			return
		}
		re, err := Regexp(pattern)
		want, refErr := path.Match(pattern, name)
		if err != nil || refErr != nil {
			return
		}
		if got := re.MatchString(name); got != want {
			t.Errorf("%q ~ %q: %v, path.Match says %v (regexp %s)", pattern, name, got, want, re)
		}
	})
}
