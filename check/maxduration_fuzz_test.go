package check

import (
	"strings"
	"testing"
	"unicode"
)

// FuzzWithMaxDuration feeds arbitrary --max-duration values to the
// parser: it never panics; a refusal is one line that names the value; an
// accepted value is a positive bound whose series (trimmed, not empty when
// a ':' was given) and duration parse back the same when written out
// again, named (its check case's name) without control characters, which
// broke check's one-line text result ("2s\n").
func FuzzWithMaxDuration(f *testing.F) {
	for _, s := range []string{"2s", "tools/call search:2s", "tools/call:500ms", "a:b:3h", ":2s", "x:", "x:-1s",
		"x:0s", "1.5h", "9223372036854775807ns",
		"tools/call\n:2s", "2s\n", "a\tb:1s", "\x00:1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		var o options
		if err := WithMaxDuration(spec)(&o); err != nil {
			if msg := err.Error(); strings.ContainsAny(msg, "\r\n") || !strings.HasPrefix(msg, "max duration ") {
				t.Errorf("%q: error %q: want one line starting with \"max duration \"", spec, msg)
			}
			return
		}
		if len(o.maxDuration) != 1 {
			t.Fatalf("%q: %d bounds, want 1", spec, len(o.maxDuration))
		}
		m := o.maxDuration[0]
		if m.d <= 0 {
			t.Errorf("%q: bound %v, want a positive one", spec, m.d)
		}
		if strings.IndexFunc(m.spec, unicode.IsControl) >= 0 || m.spec != strings.TrimSpace(m.spec) {
			t.Errorf("%q: named %q: the name of its case, a line of the text result, holds a control character or spaces around it", spec, m.spec)
		}
		if m.series != strings.TrimSpace(m.series) || (strings.Contains(spec, ":") && m.series == "") {
			t.Errorf("%q: series %q: want it trimmed and not empty", spec, m.series)
		}
		again := m.d.String()
		if m.series != "" {
			again = m.series + ":" + again
		}
		var o2 options
		if err := WithMaxDuration(again)(&o2); err != nil {
			t.Fatalf("%q: written again as %q: %v", spec, again, err)
		}
		if m2 := o2.maxDuration[0]; m2.series != m.series || m2.d != m.d {
			t.Errorf("%q: written again as %q gives series %q, %v; want %q, %v", spec, again, m2.series, m2.d, m.series, m.d)
		}
	})
}
