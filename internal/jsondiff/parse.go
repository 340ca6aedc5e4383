package jsondiff

import (
	"fmt"
)

// kind is the JSON type of a node. The order matters only for typeName.
type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// typeName names a kind for messages.
func (k kind) typeName() string {
	switch k {
	case kindNull:
		return "null"
	case kindBool:
		return "boolean"
	case kindNumber:
		return "number"
	case kindString:
		return "string"
	case kindArray:
		return "array"
	default:
		return "object"
	}
}

// node is one JSON value of a parsed document. An object's children are its
// members as key node (a string) then value node, in document order; an
// array's children are its elements.
type node struct {
	kind  kind
	esc   bool // string with a backslash escape
	start int  // first byte of the value in the document
	end   int  // one past its last byte
	next  int  // index of the node after this one and all its descendants
	n     int  // containers: members or elements
}

// maxDepth is the deepest nesting accepted, as in encoding/json.
const maxDepth = 10000

// SyntaxError is returned when an input is not valid JSON.
type SyntaxError struct {
	Offset int    // byte offset of the problem
	Msg    string // what is wrong there
}

// Error says what is wrong and at which offset.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at offset %d: %s", e.Offset, e.Msg)
}

// parser turns a document into nodes appended to nodes.
type parser struct {
	data  []byte
	nodes []node
	depth int
}

// parse parses data, which must hold exactly one JSON value with optional
// whitespace around it, into p.nodes (reset first).
func (p *parser) parse(data []byte) error {
	p.data, p.nodes, p.depth = data, p.nodes[:0], 0
	i, err := p.value(skipWS(data, 0))
	if err != nil {
		return err
	}
	if i = skipWS(data, i); i != len(data) {
		return &SyntaxError{Offset: i, Msg: fmt.Sprintf("unexpected %q after the value", data[i])}
	}
	return nil
}

func skipWS(d []byte, i int) int {
	for i < len(d) {
		switch d[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

func (p *parser) fail(i int, what string) error {
	if i >= len(p.data) {
		return &SyntaxError{Offset: i, Msg: "unexpected end of input, want " + what}
	}
	return &SyntaxError{Offset: i, Msg: fmt.Sprintf("unexpected %q, want %s", p.data[i], what)}
}

// value parses the value at i and returns the offset after it.
func (p *parser) value(i int) (int, error) {
	d := p.data
	if i >= len(d) {
		return i, p.fail(i, "a value")
	}
	switch c := d[i]; {
	case c == '{':
		return p.container(i, kindObject, '}')
	case c == '[':
		return p.container(i, kindArray, ']')
	case c == '"':
		end, esc, err := p.str(i)
		if err != nil {
			return end, err
		}
		p.nodes = append(p.nodes, node{kind: kindString, esc: esc, start: i, end: end, next: len(p.nodes) + 1})
		return end, nil
	case c == '-' || (c >= '0' && c <= '9'):
		end, err := p.number(i)
		if err != nil {
			return end, err
		}
		p.nodes = append(p.nodes, node{kind: kindNumber, start: i, end: end, next: len(p.nodes) + 1})
		return end, nil
	default:
		for _, lit := range [...]struct {
			s string
			k kind
		}{{"null", kindNull}, {"true", kindBool}, {"false", kindBool}} {
			if len(d)-i >= len(lit.s) && string(d[i:i+len(lit.s)]) == lit.s {
				end := i + len(lit.s)
				p.nodes = append(p.nodes, node{kind: lit.k, start: i, end: end, next: len(p.nodes) + 1})
				return end, nil
			}
		}
		return i, p.fail(i, "a value")
	}
}

// container parses an object or an array starting at i.
func (p *parser) container(i int, k kind, closer byte) (int, error) {
	p.depth++
	if p.depth > maxDepth {
		return i, &SyntaxError{Offset: i, Msg: fmt.Sprintf("nesting deeper than %d", maxDepth)}
	}
	at := len(p.nodes)
	p.nodes = append(p.nodes, node{kind: k, start: i})
	d := p.data
	i = skipWS(d, i+1)
	n := 0
	if i < len(d) && d[i] == closer {
		i++
	} else {
		for {
			if k == kindObject {
				if i >= len(d) || d[i] != '"' {
					return i, p.fail(i, "a string key")
				}
				end, esc, err := p.str(i)
				if err != nil {
					return end, err
				}
				p.nodes = append(p.nodes, node{kind: kindString, esc: esc, start: i, end: end, next: len(p.nodes) + 1})
				i = skipWS(d, end)
				if i >= len(d) || d[i] != ':' {
					return i, p.fail(i, "':'")
				}
				i = skipWS(d, i+1)
			}
			var err error
			if i, err = p.value(i); err != nil {
				return i, err
			}
			n++
			i = skipWS(d, i)
			if i < len(d) && d[i] == ',' {
				i = skipWS(d, i+1)
				continue
			}
			if i < len(d) && d[i] == closer {
				i++
				break
			}
			return i, p.fail(i, fmt.Sprintf("',' or '%c'", closer))
		}
	}
	p.depth--
	p.nodes[at].end, p.nodes[at].next, p.nodes[at].n = i, len(p.nodes), n
	return i, nil
}

// str checks the string starting at i (on its quote) and returns the offset
// after its closing quote and whether it holds an escape.
func (p *parser) str(i int) (int, bool, error) {
	d := p.data
	esc := false
	for j := i + 1; j < len(d); j++ {
		switch c := d[j]; {
		case c == '"':
			return j + 1, esc, nil
		case c == '\\':
			esc = true
			j++
			if j >= len(d) {
				return j, esc, p.fail(j, "an escape")
			}
			switch d[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for k := 1; k <= 4; k++ {
					if j+k >= len(d) || !isHex(d[j+k]) {
						return j + k, esc, p.fail(j+k, "a hex digit")
					}
				}
				j += 4
			default:
				return j, esc, p.fail(j, "an escape")
			}
		case c < 0x20:
			return j, esc, &SyntaxError{Offset: j, Msg: "control character in string"}
		}
	}
	return len(d), esc, p.fail(len(d), "'\"'")
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// number checks the number starting at i and returns the offset after it.
func (p *parser) number(i int) (int, error) {
	d := p.data
	if d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && isDigit(d[i]):
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	default:
		return i, p.fail(i, "a digit")
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || !isDigit(d[i]) {
			return i, p.fail(i, "a digit")
		}
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || !isDigit(d[i]) {
			return i, p.fail(i, "a digit")
		}
		for i < len(d) && isDigit(d[i]) {
			i++
		}
	}
	return i, nil
}
