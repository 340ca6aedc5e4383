// Package fileext picks the format of a file a command writes by the
// extension of its name, as `export --format requests -o`, `check -o` and
// `load --results` do, and checks that a name fits the one format a
// command writes (`report -o`): one rule and one error for all, so that a
// name with an extension no format has (`-o requests.xlsx`, `-o r.pdf`) is
// refused, naming the accepted ones, rather than written in a format it
// does not say.
package fileext

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Ext maps a file name extension (".csv", lower case, with its dot) to a
// format.
type Ext[F any] struct {
	Ext    string
	Format F
}

// Pick returns the format of the first of exts that name ends in, case
// aside, or an error naming name and the accepted extensions.
func Pick[F any](name string, exts ...Ext[F]) (F, error) {
	lower := strings.ToLower(name)
	names := make([]string, len(exts))
	for i, e := range exts {
		if strings.HasSuffix(lower, e.Ext) {
			return e.Format, nil
		}
		names[i] = e.Ext
	}
	var zero F
	return zero, fmt.Errorf("%q: want a name ending in %s", name, orList(names))
}

// Fit returns nil when name ends in one of exts, case aside, or has no
// extension at all (no dot in its last element, as "report"): the rule of
// a file written in one format, which such a name does not contradict.
// Otherwise (r.pdf for HTML) it returns the error Pick returns.
func Fit(name string, exts ...string) error {
	if filepath.Ext(filepath.Base(name)) == "" {
		return nil
	}
	_, err := Pick(name, extsOf(exts)...)
	return err
}

// extsOf maps each of exts to itself.
func extsOf(exts []string) []Ext[string] {
	out := make([]Ext[string], len(exts))
	for i, e := range exts {
		out[i] = Ext[string]{e, e}
	}
	return out
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
