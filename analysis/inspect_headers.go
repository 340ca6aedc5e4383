package analysis

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// Streamable HTTP on 2026-07-28 repeats parts of the body in request
// headers: Mcp-Method (every request), Mcp-Name (params.name or
// params.uri of tools/call, prompts/get, resources/read) and
// Mcp-Param-<Header> for the tool arguments whose input schema property
// carries an "x-mcp-header" annotation (learned here from the tools/list
// results in the tape). A header missing where that revision requires it
// or disagreeing with the body is a violation; the server answers either
// with HTTP 400 and -32020.

// Rules on the 2026-07-28 request headers.
const (
	RuleMcpHeaderMissing  = "mcp-header-missing"
	RuleMcpHeaderMismatch = "mcp-header-mismatch"
)

// headersVersion is the first protocol version with the standard headers.
const headersVersion = "2026-07-28"

// paramBinding is one x-mcp-header annotation of a tool's input schema:
// the argument at path goes in the header Mcp-Param-<header>.
type paramBinding struct {
	path   []string
	header string
}

// learnToolHeaders reads the x-mcp-header annotations of the tools of a
// tools/list result.
func (in *Inspector) learnToolHeaders(frame []byte) {
	_ = eachElement(lookup(frame, "result", "tools"), func(def []byte) {
		name, ok := lookupString(def, "name")
		if !ok {
			return
		}
		var schema struct {
			Properties map[string]schemaProperty `json:"properties"`
		}
		if json.Unmarshal(lookup(def, "inputSchema"), &schema) != nil {
			return
		}
		b := collectBindings(schema.Properties, nil, nil)
		if len(b) == 0 {
			delete(in.toolHeaders, name)
			return
		}
		if len(in.toolHeaders) < in.o.maxDistinct {
			in.toolHeaders[name] = b
		}
	})
}

// schemaProperty is what learnToolHeaders reads of a schema property.
type schemaProperty struct {
	Header     string                    `json:"x-mcp-header"`
	Properties map[string]schemaProperty `json:"properties"`
}

func collectBindings(props map[string]schemaProperty, prefix []string, out []paramBinding) []paramBinding {
	for name, p := range props {
		path := append(append([]string(nil), prefix...), name)
		if p.Header != "" {
			out = append(out, paramBinding{path, p.Header})
		}
		out = collectBindings(p.Properties, path, out)
	}
	return out
}

// checkMcpHeaders checks the request headers of an exchange's "response"
// event against the one request the exchange carried.
func (in *Inspector) checkMcpHeaders(it *Item, headers map[string]json.RawMessage) {
	if headers == nil || headerValue(headers, "mcp-protocol-version") < headersVersion {
		return
	}
	reqs := in.exchanges[it.Rec.Exchange]
	if len(reqs) != 1 {
		return // none, or a batch: the headers name no single request
	}
	r := reqs[0]
	s := in.session(it.Rec.Session, it.Rec.Time)
	check := func(header, body string) {
		got, ok := decodedHeader(headers, header)
		switch {
		case !ok:
			in.violation(RuleMcpHeaderMissing, it, s, "%s missing (the body says %q)", header, clip(body, 60))
		case got != body:
			in.violation(RuleMcpHeaderMismatch, it, s, "%s %q, body %q", header, clip(got, 60), clip(body, 60))
		}
	}
	check("Mcp-Method", r.method)
	if r.method == mToolsCall || r.method == mPromptsGet || r.method == mResRead {
		if r.name != "" && r.name != Other {
			check("Mcp-Name", r.name)
		}
	}
	if r.method != mToolsCall {
		return
	}
	for _, b := range in.toolHeaders[r.name] {
		header := "Mcp-Param-" + b.header
		got, present := decodedHeader(headers, header)
		arg := lookup(r.args, b.path...)
		want, isPrimitive := primitiveText(arg)
		switch {
		case arg == nil || string(arg) == "null":
			if present {
				in.violation(RuleMcpHeaderMismatch, it, s, "%s sent for the absent argument %s", header, strings.Join(b.path, "."))
			}
		case !isPrimitive:
		case !present:
			in.violation(RuleMcpHeaderMissing, it, s, "%s missing for argument %s of tool %s", header, strings.Join(b.path, "."), clip(r.name, 40))
		case !sameParam(got, want, arg):
			in.violation(RuleMcpHeaderMismatch, it, s, "%s %q, argument %s %s", header, clip(got, 40), strings.Join(b.path, "."), clip(string(arg), 40))
		}
	}
}

// decodedHeader returns the value of header, decoding the "=?base64?…?="
// form of non-ASCII values, and whether it is present.
func decodedHeader(h map[string]json.RawMessage, header string) (string, bool) {
	v := headerValue(h, strings.ToLower(header))
	if v == "" {
		return "", false
	}
	if inner, ok := strings.CutPrefix(v, "=?base64?"); ok {
		if inner, ok = strings.CutSuffix(inner, "?="); ok {
			if b, err := base64.StdEncoding.DecodeString(inner); err == nil {
				return string(b), true
			}
		}
	}
	return v, true
}

// primitiveText formats an argument that may go in a header: a string, a
// boolean or an integer.
func primitiveText(raw []byte) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if s, ok := stringValue(raw); ok {
		return s, true
	}
	switch string(raw) {
	case "true", "false":
		return string(raw), true
	}
	if f, err := strconv.ParseFloat(string(raw), 64); err == nil && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.FormatInt(int64(f), 10), true
	}
	return "", false
}

// sameParam compares a header value with the argument's text; an integer
// argument compares by value ("5" and "5.0" agree).
func sameParam(header, want string, arg []byte) bool {
	if header == want {
		return true
	}
	if _, isString := stringValue(arg); isString {
		return false
	}
	a, err1 := strconv.ParseFloat(header, 64)
	b, err2 := strconv.ParseFloat(want, 64)
	return err1 == nil && err2 == nil && a == b
}
