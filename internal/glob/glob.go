// Package glob compiles the method patterns of mcptape's flags (show
// --method, record --record-only and --skip) into regular expressions.
package glob

import (
	"errors"
	"regexp"
	"strings"
)

// Regexp turns a glob into an anchored regular expression: "*" matches any
// run of characters (slashes included), "?" one character, "[...]" a
// class ("[!...]" its complement); everything else matches itself.
func Regexp(glob string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("(?s)^") // (?s): "*" and "?" take a newline too, as any character
	for i := 0; i < len(glob); i++ {
		switch c := glob[i]; c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '[':
			j := strings.IndexByte(glob[i+1:], ']')
			if j < 0 {
				return nil, errors.New("unterminated [")
			}
			class := glob[i+1 : i+1+j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += j + 1
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}
