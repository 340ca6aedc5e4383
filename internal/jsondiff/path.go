package jsondiff

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// segKind is what one step of an ignore pattern matches.
type segKind uint8

const (
	segKey      segKind = iota // one object key, by name
	segIndex                   // one array index, by number
	segAny                     // *: any one key or index
	segAnyIndex                // [*]: any one array index
	segDeep                    // **: any number of steps
)

// seg is one step of a pattern.
type seg struct {
	kind segKind
	key  string
	idx  int
}

// maxSegments is the most steps a pattern may have: its matching state is
// a 64-bit mask with one bit per position.
const maxSegments = 63

// pattern is a compiled ignore pattern.
type pattern []seg

// step is one step of a concrete path: an object key (raw JSON string, with
// quotes) or an array index.
type step struct {
	key   []byte // nil for an index
	esc   bool
	index int
}

// compilePattern reads an ignore pattern; see the package doc for its syntax.
func compilePattern(s string) (pattern, error) {
	var p pattern
	i := 0
	for i < len(s) {
		switch {
		case s[i] == '[':
			end := closingBracket(s, i)
			if end < 0 {
				return nil, fmt.Errorf("path %q: unclosed '[' at %d", s, i)
			}
			inner := s[i+1 : end]
			switch {
			case inner == "*":
				p = append(p, seg{kind: segAnyIndex})
			case strings.HasPrefix(inner, `"`):
				var k string
				if err := json.Unmarshal([]byte(inner), &k); err != nil {
					return nil, fmt.Errorf("path %q: bad quoted key at %d: %w", s, i, err)
				}
				p = append(p, seg{kind: segKey, key: k})
			default:
				n, err := strconv.Atoi(inner)
				if err != nil || n < 0 {
					return nil, fmt.Errorf("path %q: want an index, * or a quoted key in brackets at %d", s, i)
				}
				p = append(p, seg{kind: segIndex, idx: n})
			}
			i = end + 1
		case s[i] == '.' && i > 0:
			i++
			if i >= len(s) || s[i] == '.' || s[i] == '[' {
				return nil, fmt.Errorf("path %q: want a key after '.' at %d", s, i)
			}
			fallthrough
		default:
			j := i
			for j < len(s) && s[j] != '.' && s[j] != '[' {
				j++
			}
			name := s[i:j]
			switch {
			case name == "*":
				p = append(p, seg{kind: segAny})
			case name == "**":
				if len(p) == 0 || p[len(p)-1].kind != segDeep { // ** ** is **
					p = append(p, seg{kind: segDeep})
				}
			case plainKey(name):
				p = append(p, seg{kind: segKey, key: name})
			default:
				return nil, fmt.Errorf("path %q: key %q needs quoting as [%q]", s, name, name)
			}
			i = j
		}
	}
	if len(p) == 0 {
		return nil, fmt.Errorf("empty path (use ** to ignore everything)")
	}
	if len(p) > maxSegments {
		return nil, fmt.Errorf("path %q: more than %d steps", s, maxSegments)
	}
	return p, nil
}

// closingBracket finds the ']' closing the '[' at i, skipping a quoted key.
func closingBracket(s string, i int) int {
	inQuote := false
	for j := i + 1; j < len(s); j++ {
		switch {
		case inQuote && s[j] == '\\':
			j++
		case s[j] == '"':
			inQuote = !inQuote
		case !inQuote && s[j] == ']':
			return j
		}
	}
	return -1
}

// plainKey reports whether a key can be written without quotes.
func plainKey(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '_' || c == '-' || c == '$' || c == '@' || c == '/') {
			return false
		}
	}
	return k != "*" && k != "**"
}

// matches reports whether segment g (not segDeep) accepts step st.
func (g *seg) matches(st *step) bool {
	switch g.kind {
	case segAny:
		return true
	case segAnyIndex:
		return st.key == nil
	case segIndex:
		return st.key == nil && st.index == g.idx
	case segKey:
		if st.key == nil {
			return false
		}
		if !st.esc {
			raw := st.key[1 : len(st.key)-1]
			return string(raw) == g.key
		}
		return unquote(st.key, true) == g.key
	}
	return false
}

// formatPath renders a concrete path.
func formatPath(steps []step) string {
	if len(steps) == 0 {
		return ""
	}
	var b strings.Builder
	for i := range steps {
		st := &steps[i]
		if st.key == nil {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(st.index))
			b.WriteByte(']')
			continue
		}
		k := unquote(st.key, st.esc)
		if plainKey(k) {
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(k)
			continue
		}
		q, _ := json.Marshal(k)
		b.WriteByte('[')
		b.Write(q)
		b.WriteByte(']')
	}
	return b.String()
}
