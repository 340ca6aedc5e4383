package mock

import (
	"strings"
	"testing"
)

// FuzzParseMatch feeds arbitrary --match values to ParseMatch: it never
// panics; a refusal is one line that names the modes; an accepted value
// is the name of the mode it gives, which parses back to that mode.
func FuzzParseMatch(f *testing.F) {
	for _, s := range []string{"exact", "method", "tool", "", "Tool", " tool", "tool\n", "tools", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMatch(s)
		if err != nil {
			if msg := err.Error(); strings.ContainsAny(msg, "\r\n") || !strings.Contains(msg, "want exact, method or tool") {
				t.Errorf("%q: error %q: want one line naming the modes", s, msg)
			}
			return
		}
		if m.String() != s {
			t.Errorf("%q: parsed as %v, named %q", s, m, m.String())
		}
		if again, err := ParseMatch(m.String()); err != nil || again != m {
			t.Errorf("%q: %v named %q parses as %v, %v", s, m, m.String(), again, err)
		}
	})
}
