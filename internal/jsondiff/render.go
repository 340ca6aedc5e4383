package jsondiff

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"unicode/utf8"
)

// DefaultWidth is the line width Render aims for when given 0.
const DefaultWidth = 100

// Render writes diffs as a compact unified-style diff, one line per side:
//
//   - result.content[0].text: "hello"
//   - result.content[0].text: "hullo"
//   - result.isError: true
//     ~ result.count: "3" → 3 (string → number)
//
// Values are written as compact JSON, cut with "…" and their size so that a
// line stays within width columns (DefaultWidth when width is 0); indent is
// written before each line.
func Render(w io.Writer, diffs []Difference, indent string, width int) error {
	if width <= 0 {
		width = DefaultWidth
	}
	bw := bufio.NewWriter(w)
	for i := range diffs {
		d := &diffs[i]
		path := d.Path
		if path == "" {
			path = "(root)"
		}
		room := max(width-len(indent)-len(path)-4, 16)
		switch d.Kind {
		case TypeChanged:
			half := max((room-len(" → ")-24)/2, 8)
			fmt.Fprintf(bw, "%s~ %s: %s → %s (%s → %s)\n", indent, path, clip(d.Old, half), clip(d.New, half),
				typeOf(d.Old), typeOf(d.New))
		default:
			if d.Old != nil {
				fmt.Fprintf(bw, "%s- %s: %s\n", indent, path, clip(d.Old, room))
			}
			if d.New != nil {
				fmt.Fprintf(bw, "%s+ %s: %s\n", indent, path, clip(d.New, room))
			}
		}
	}
	return bw.Flush()
}

// String renders one difference on one or two lines, without a width limit.
func (d Difference) String() string {
	var b bytes.Buffer
	_ = Render(&b, []Difference{d}, "", 1<<30)
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// clip writes a value compactly in at most room runes.
func clip(raw json.RawMessage, room int) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		b.Reset()
		b.Write(raw)
	}
	s := b.String()
	if utf8.RuneCountInString(s) <= room {
		return s
	}
	suffix := fmt.Sprintf("… (%d bytes)", len(raw))
	keep := max(room-utf8.RuneCountInString(suffix), 4)
	n := 0
	for i := range s {
		if n == keep {
			return s[:i] + suffix
		}
		n++
	}
	return s
}

// typeOf names the JSON type of a raw value.
func typeOf(raw json.RawMessage) string {
	raw = bytes.TrimLeft(raw, " \t\r\n")
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case 'n':
		return kindNull.typeName()
	case 't', 'f':
		return kindBool.typeName()
	case '"':
		return kindString.typeName()
	case '[':
		return kindArray.typeName()
	case '{':
		return kindObject.typeName()
	default:
		return kindNumber.typeName()
	}
}
