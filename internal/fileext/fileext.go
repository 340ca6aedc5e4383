// Package fileext picks the format of a file a command writes by the
// extension of its name, as `export --format requests -o` and `load
// --results` do: one rule and one error for both, so that a name with an
// extension no format has (`-o requests.xlsx`) is refused, naming the
// accepted ones, rather than written in a format it does not say.
package fileext

import (
	"fmt"
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

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
