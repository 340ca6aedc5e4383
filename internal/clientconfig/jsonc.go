package clientconfig

import (
	"encoding/json"
	"fmt"
)

// A configuration file is edited in place, so it is parsed into a tree of
// values that know their byte spans; nothing is re-encoded. The parser
// accepts JSON with comments (// and /* */) and trailing commas, as VS Code
// writes its settings and mcp.json (JSONC); plain JSON is a subset.

// kind is the JSON type of a value.
type kind uint8

const (
	kindLiteral kind = iota // number, true, false, null
	kindString
	kindArray
	kindObject
)

// value is one parsed JSON value: its kind, its span in the document, and
// for a string its decoded text, for an array its elements, for an object
// its members in document order.
type value struct {
	kind       kind
	start, end int // span of the value's own text
	str        string
	elems      []*value
	members    []member
}

// member is one key of an object and its value.
type member struct {
	key      string
	keyStart int // offset of the key's opening quote
	val      *value
}

// get returns the value of key in an object (the last one when the key is
// repeated, as encoding/json decodes it), or nil.
func (v *value) get(key string) *value {
	if v == nil || v.kind != kindObject {
		return nil
	}
	var found *value
	for _, m := range v.members {
		if m.key == key {
			found = m.val
		}
	}
	return found
}

// getString returns the string value of key, and whether there is one.
func (v *value) getString(key string) (string, bool) {
	s := v.get(key)
	if s == nil || s.kind != kindString {
		return "", false
	}
	return s.str, true
}

// maxDepth bounds nesting, so that a hostile file cannot exhaust the stack.
const maxDepth = 1000

// parser reads one document.
type parser struct {
	b     []byte
	i     int
	depth int
}

// parseJSONC parses a whole document; an error names the byte offset.
func parseJSONC(b []byte) (*value, error) {
	p := &parser{b: b}
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.i < len(b) {
		return nil, p.errorf("unexpected %q after the document", b[p.i])
	}
	return v, nil
}

func (p *parser) errorf(format string, a ...any) error {
	return fmt.Errorf("offset %d: %s", p.i, fmt.Sprintf(format, a...))
}

// space skips white space and comments.
func (p *parser) space() error {
	for p.i < len(p.b) {
		switch c := p.b[p.i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.i++
		case c == '/' && p.i+1 < len(p.b) && p.b[p.i+1] == '/':
			for p.i < len(p.b) && p.b[p.i] != '\n' {
				p.i++
			}
		case c == '/' && p.i+1 < len(p.b) && p.b[p.i+1] == '*':
			end := p.i + 2
			for end+1 < len(p.b) && (p.b[end] != '*' || p.b[end+1] != '/') {
				end++
			}
			if end+1 >= len(p.b) {
				return p.errorf("unterminated comment")
			}
			p.i = end + 2
		default:
			return nil
		}
	}
	return nil
}

func (p *parser) value() (*value, error) {
	if err := p.space(); err != nil {
		return nil, err
	}
	if p.i >= len(p.b) {
		return nil, p.errorf("unexpected end of the document")
	}
	switch c := p.b[p.i]; c {
	case '{', '[':
		p.depth++
		if p.depth > maxDepth {
			return nil, p.errorf("nested too deeply")
		}
		defer func() { p.depth-- }()
		if c == '{' {
			return p.object()
		}
		return p.array()
	case '"':
		return p.string()
	default:
		return p.literal()
	}
}

// string reads a string token and decodes it with encoding/json.
func (p *parser) string() (*value, error) {
	start := p.i
	p.i++
	for p.i < len(p.b) && p.b[p.i] != '"' {
		if p.b[p.i] == '\\' {
			p.i++
		}
		p.i++
	}
	if p.i >= len(p.b) {
		p.i = start
		return nil, p.errorf("unterminated string")
	}
	p.i++
	v := &value{kind: kindString, start: start, end: p.i}
	if err := json.Unmarshal(p.b[start:p.i], &v.str); err != nil {
		p.i = start
		return nil, p.errorf("bad string: %v", err)
	}
	return v, nil
}

// literal reads a number, true, false or null.
func (p *parser) literal() (*value, error) {
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c == '-' || c == '+' || c == '.' || c == 'E') {
			break
		}
		p.i++
	}
	if start == p.i || !json.Valid(p.b[start:p.i]) {
		p.i = start
		return nil, p.errorf("unexpected %q", p.b[start])
	}
	return &value{kind: kindLiteral, start: start, end: p.i}, nil
}

// list reads the items of an array or object up to close, calling item for
// each; a trailing comma is allowed.
func (p *parser) list(close byte, item func() error) error {
	p.i++ // the opening bracket
	for {
		if err := p.space(); err != nil {
			return err
		}
		if p.i >= len(p.b) {
			return p.errorf("unexpected end of the document, want %q", close)
		}
		if p.b[p.i] == close {
			p.i++
			return nil
		}
		if err := item(); err != nil {
			return err
		}
		if err := p.space(); err != nil {
			return err
		}
		switch {
		case p.i < len(p.b) && p.b[p.i] == ',':
			p.i++
		case p.i < len(p.b) && p.b[p.i] == close:
		default:
			return p.errorf("want ',' or %q", close)
		}
	}
}

func (p *parser) array() (*value, error) {
	v := &value{kind: kindArray, start: p.i}
	err := p.list(']', func() error {
		e, err := p.value()
		if err == nil {
			v.elems = append(v.elems, e)
		}
		return err
	})
	v.end = p.i
	return v, err
}

func (p *parser) object() (*value, error) {
	v := &value{kind: kindObject, start: p.i}
	err := p.list('}', func() error {
		if p.b[p.i] != '"' {
			return p.errorf("want a key")
		}
		k, err := p.string()
		if err != nil {
			return err
		}
		if err := p.space(); err != nil {
			return err
		}
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return p.errorf("want ':' after key %q", k.str)
		}
		p.i++
		val, err := p.value()
		if err != nil {
			return err
		}
		v.members = append(v.members, member{key: k.str, keyStart: k.start, val: val})
		return nil
	})
	v.end = p.i
	return v, err
}
