package loadgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Call is one kind of request of a workload, parsed from a --call spec by
// ParseCall.
type Call struct {
	// Weight is the relative frequency of the call among the workload's
	// calls (at least 1).
	Weight int
	// Method is the JSON-RPC method, such as "tools/call".
	Method string
	// Tool is the tool name for tools/call ("" otherwise).
	Tool string
	// Args holds the tool arguments (tools/call) or the params of any other
	// method; nil when none were given.
	Args json.RawMessage
	// Think, when HasThink, replaces the run's think time after this call
	// (closed model; from a scenario step).
	Think    time.Duration
	HasThink bool

	vars *argsTemplate // Args with scenario variables
}

// Series returns the names of the latency series a call is recorded in:
// its method, and for tools/call also "tools/call NAME".
func (c *Call) Series() []string {
	if c.Tool != "" {
		return []string{c.Method, c.Method + " " + c.Tool}
	}
	return []string{c.Method}
}

// ParseCall parses a --call spec: "[WEIGHT:]METHOD [TOOL] [JSON]". TOOL is
// required for tools/call and absent for other methods; JSON is the tool's
// arguments (tools/call) or the method's params, and must be an object.
// Examples: `tools/call echo {"message":"hi"}`, `3:tools/list`, `ping`.
func ParseCall(spec string) (Call, error) {
	c := Call{Weight: 1}
	rest := strings.TrimSpace(spec)
	if i := strings.IndexByte(rest, ':'); i > 0 && !strings.ContainsAny(rest[:i], " /{") {
		w, err := strconv.Atoi(rest[:i])
		if err != nil || w < 1 || w > 1000000 {
			return Call{}, fmt.Errorf("call %q: weight %q is not an integer from 1 to 1000000", spec, rest[:i])
		}
		c.Weight, rest = w, strings.TrimSpace(rest[i+1:])
	}
	c.Method, rest = cutField(rest)
	if c.Method == "" {
		return Call{}, fmt.Errorf("call %q: no method", spec)
	}
	if strings.ContainsAny(c.Method, "\"\\{}[]") {
		return Call{}, fmt.Errorf("call %q: method %q holds JSON characters", spec, c.Method)
	}
	switch c.Method {
	case "initialize", "notifications/initialized":
		return Call{}, fmt.Errorf("call %q: %s is part of session setup, not a workload call", spec, c.Method)
	}
	if c.Method == "tools/call" {
		c.Tool, rest = cutField(rest)
		if c.Tool == "" || strings.HasPrefix(c.Tool, "{") {
			return Call{}, fmt.Errorf("call %q: tools/call needs a tool name before the arguments", spec)
		}
	}
	if rest != "" {
		raw := []byte(rest)
		if !utf8.Valid(raw) {
			return Call{}, fmt.Errorf("call %q: arguments are not valid UTF-8", spec)
		}
		if !json.Valid(raw) {
			return Call{}, fmt.Errorf("call %q: arguments %q are not valid JSON", spec, rest)
		}
		if raw[0] != '{' {
			return Call{}, fmt.Errorf("call %q: arguments must be a JSON object", spec)
		}
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return Call{}, fmt.Errorf("call %q: %w", spec, err)
		}
		c.Args = buf.Bytes()
	}
	return c, nil
}

// cutField returns the first space-separated field of s and the rest.
func cutField(s string) (string, string) {
	if strings.HasPrefix(s, "{") {
		return "", s
	}
	f, rest, _ := strings.Cut(s, " ")
	return f, strings.TrimSpace(rest)
}

// frameSpec says how request frames are built beyond the call itself.
type frameSpec struct {
	progress bool   // put the request id as _meta.progressToken
	version  string // 2026-07-28 or later: protocol metadata in every request
}

// template is a request frame cut where the request id goes: the id is
// written between consecutive parts.
type template struct {
	call   *Call
	series []string // call.Series(), made once
	parts  [][]byte
	fs     frameSpec
}

// reqVars are the values of scenario variables for one request.
type reqVars struct {
	session   int
	iteration int64
	rng       *rand.Rand
}

// render returns the template of one request: t itself, or for a call
// with scenario variables a template with them filled in.
func (t *template) render(v reqVars) *template {
	if t.call.vars == nil {
		return t
	}
	c := *t.call
	c.Args = t.call.vars.render(v.session, v.iteration, v.rng)
	r := newTemplate(&c, t.fs)
	r.call, r.series = t.call, t.series // series and think of the original call
	return r
}

// appendFrame appends the frame of request id to dst.
func (t *template) appendFrame(dst []byte, id int64) []byte {
	for i, p := range t.parts {
		if i > 0 {
			dst = strconv.AppendInt(dst, id, 10)
		}
		dst = append(dst, p...)
	}
	return dst
}

// newTemplate builds the frame template of c.
func newTemplate(c *Call, fs frameSpec) *template {
	var head bytes.Buffer
	head.WriteString(`{"jsonrpc":"2.0","method":`)
	m, _ := json.Marshal(c.Method)
	head.Write(m)
	head.WriteString(`,"params":{`)
	first := true
	sep := func() {
		if !first {
			head.WriteByte(',')
		}
		first = false
	}
	if c.Tool != "" {
		sep()
		n, _ := json.Marshal(c.Tool)
		head.WriteString(`"name":`)
		head.Write(n)
		if c.Args != nil {
			head.WriteString(`,"arguments":`)
			head.Write(c.Args)
		}
	} else if len(c.Args) > 2 {
		sep()
		head.Write(bytes.TrimSpace(c.Args[1 : len(c.Args)-1]))
	}
	meta := metaFields(fs.version)
	if meta != "" || fs.progress {
		sep()
		head.WriteString(`"_meta":{`)
		head.WriteString(meta)
		if fs.progress {
			if meta != "" {
				head.WriteByte(',')
			}
			head.WriteString(`"progressToken":`)
			parts := [][]byte{bytes.Clone(head.Bytes()), []byte(`}},"id":`), []byte(`}`)}
			return &template{call: c, series: c.Series(), parts: parts, fs: fs}
		}
		head.WriteByte('}')
	}
	head.WriteString(`},"id":`)
	return &template{call: c, series: c.Series(), parts: [][]byte{head.Bytes(), []byte(`}`)}, fs: fs}
}

// clientName is the clientInfo name the load generator announces.
const clientName = "mcptape-load"

// metaFields returns the _meta members every request of a 2026-07-28 (or
// later) session carries, or "" for earlier versions.
func metaFields(version string) string {
	if !stateless(version) {
		return ""
	}
	return `"io.modelcontextprotocol/protocolVersion":"` + version +
		`","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"` +
		clientName + `","version":"1"}`
}

// stateless reports whether version is one without the initialize
// handshake (2026-07-28 and later).
func stateless(version string) bool { return version >= "2026-07-28" }

// initializeFrame returns the initialize request of a session.
func initializeFrame(id int64, version string) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":%q,"version":"1"}}}`,
		id, version, clientName)
}

// discoverFrame returns the server/discover request of a 2026-07-28
// session.
func discoverFrame(id int64, version string) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"server/discover","params":{"_meta":{%s}}}`, id, metaFields(version))
}

// initializedFrame is the notification that completes the handshake.
var initializedFrame = []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

// picker chooses calls by weight.
type picker struct {
	tmpls []*template
	cum   []int // cumulative weights
}

func newPicker(calls []Call, fs frameSpec) *picker {
	p := &picker{}
	total := 0
	for i := range calls {
		total += calls[i].Weight
		p.tmpls = append(p.tmpls, newTemplate(&calls[i], fs))
		p.cum = append(p.cum, total)
	}
	return p
}

// pick returns a template chosen by weight with r.
func (p *picker) pick(r *rand.Rand) *template {
	if len(p.tmpls) == 1 {
		return p.tmpls[0]
	}
	n := r.IntN(p.cum[len(p.cum)-1])
	for i, c := range p.cum {
		if n < c {
			return p.tmpls[i]
		}
	}
	return p.tmpls[len(p.tmpls)-1]
}
