package mock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/mcptape/mcptape/jsonrpc"
)

// Match says which part of a client request picks its recorded answer.
type Match int

const (
	// MatchExact keys a request by its method and params, with ids, _meta
	// (progress tokens, protocol version, client info) and cursors left
	// out, numbers by value (1.0 is 1). It is the default.
	MatchExact Match = iota
	// MatchMethod keys a request by its method only.
	MatchMethod
	// MatchTool keys a request by its method and params.name (tools/call,
	// prompts/get) or params.uri (resources/read...).
	MatchTool
)

// ParseMatch returns the Match named s: "exact", "method" or "tool".
func ParseMatch(s string) (Match, error) {
	switch s {
	case "exact":
		return MatchExact, nil
	case "method":
		return MatchMethod, nil
	case "tool":
		return MatchTool, nil
	}
	return 0, fmt.Errorf("match %q: want exact, method or tool", s)
}

// String returns the match's name.
func (m Match) String() string {
	switch m {
	case MatchMethod:
		return "method"
	case MatchTool:
		return "tool"
	}
	return "exact"
}

// methodOnly are the methods matched by method whatever the mode: their
// params describe the client (initialize, server/discover) or nothing.
var methodOnly = map[string]bool{"initialize": true, "server/discover": true, "ping": true}

// ignoredParams are the members of params left out of the exact key: they
// change from one run to the next without changing the question.
var ignoredParams = []string{"_meta", "cursor"}

// request is what the key of a request is made of: its method and its
// params decoded (nil when absent or not JSON).
type request struct {
	method string
	params any
	name   string
}

// parseRequest decodes the method, params and name of a request frame.
func parseRequest(frame []byte) (request, error) {
	var m struct {
		Method string          `json:"method"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(frame, &m); err != nil {
		return request{}, err
	}
	r := request{method: m.Method}
	if len(m.Params) == 0 {
		return r, nil
	}
	d := json.NewDecoder(bytes.NewReader(m.Params))
	d.UseNumber()
	if err := d.Decode(&r.params); err != nil {
		return r, err
	}
	r.params = canonicalNumbers(r.params)
	if p, ok := r.params.(map[string]any); ok {
		for _, k := range ignoredParams {
			delete(p, k)
		}
		if len(p) == 0 {
			r.params = nil
		}
		if s, ok := p["name"].(string); ok {
			r.name = s
		} else if s, ok := p["uri"].(string); ok {
			r.name = s
		}
	}
	return r, nil
}

// canonicalNumbers replaces each number of v (decoded with UseNumber)
// with its canonical text, that of jsonrpc.ID.Key (6, 6.0 and 60e-1 are
// 6), and returns v: a client that spells a number otherwise than the
// recorded one (a Python client's 1.0 where a JavaScript client sent 1)
// asks the same question.
func canonicalNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		return json.Number(jsonrpc.ID{Type: jsonrpc.IDNumber, Raw: []byte(x)}.Key())
	case map[string]any:
		for k, e := range x {
			x[k] = canonicalNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = canonicalNumbers(e)
		}
	}
	return v
}

// key returns the matching key of the request under mode m.
func (r *request) key(m Match) string {
	if m == MatchMethod || methodOnly[r.method] {
		return r.method
	}
	if m == MatchTool {
		return r.method + "\x00" + r.name
	}
	if r.params == nil {
		return r.method + "\x00"
	}
	b, err := json.Marshal(r.params) // maps marshal with sorted keys
	if err != nil {                  // not reached: the value came from JSON
		return r.method + "\x00?"
	}
	return r.method + "\x00" + string(b)
}

// describe names a request for messages: its method and name.
func (r *request) describe() string {
	if r.name != "" {
		return fmt.Sprintf("%s %q", r.method, r.name)
	}
	return r.method
}

// differences lists, at most max, the paths where the params a and b
// differ, each with both values ("params.arguments.message: recorded "hi",
// got "ho"").
func differences(a, b any, max int) []string {
	var out []string
	diffValues("params", a, b, &out, max)
	return out
}

func diffValues(path string, a, b any, out *[]string, max int) {
	if len(*out) >= max {
		return
	}
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := make([]string, 0, len(am)+len(bm))
		for k := range am {
			keys = append(keys, k)
		}
		for k := range bm {
			if _, ok := am[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			av, ina := am[k]
			bv, inb := bm[k]
			switch {
			case !ina:
				add(out, max, "%s.%s: not recorded, got %s", path, k, short(bv))
			case !inb:
				add(out, max, "%s.%s: recorded %s, missing", path, k, short(av))
			default:
				diffValues(path+"."+k, av, bv, out, max)
			}
		}
		return
	}
	as, aok := a.([]any)
	bs, bok := b.([]any)
	if aok && bok && len(as) == len(bs) {
		for i := range as {
			diffValues(fmt.Sprintf("%s[%d]", path, i), as[i], bs[i], out, max)
		}
		return
	}
	if short(a) != short(b) || !sameJSON(a, b) {
		add(out, max, "%s: recorded %s, got %s", path, short(a), short(b))
	}
}

func add(out *[]string, max int, format string, a ...any) {
	if len(*out) < max {
		*out = append(*out, fmt.Sprintf(format, a...))
	}
}

func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// short returns a value as compact JSON, cut to 40 bytes.
func short(v any) string {
	if v == nil {
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	s := string(b)
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return strings.ReplaceAll(s, "\n", " ")
}
