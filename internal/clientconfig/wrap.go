package clientconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Options says which entries Wrap and Unwrap change.
type Options struct {
	// Mcptape is the mcptape program a wrapped entry runs (an absolute
	// path: desktop clients start servers with a short PATH).
	Mcptape string
	// Servers names the entries to change; with All, every one that can be.
	Servers []string
	All     bool
}

// Action is what happened to one entry.
type Action string

// The actions Wrap and Unwrap report.
const (
	Wrapped        Action = "wrapped"
	AlreadyWrapped Action = "already wrapped"
	SkippedHTTP    Action = "skipped (HTTP server: wrap records stdio servers)"
	Unwrapped      Action = "unwrapped"
	NotWrapped     Action = "not wrapped"
)

// Outcome is what happened to one entry.
type Outcome struct {
	Server string // the entry's name
	Table  string // where it is in the file ("mcpServers")
	Action Action
}

// ErrHTTP is returned, wrapped, when a server named to Wrap is an HTTP
// server (an entry with "url"): a client connects to it by itself, so
// there is no command to run through mcptape record.
var ErrHTTP = errors.New("is an HTTP server")

// entry is one server entry found in a configuration file.
type entry struct {
	name  string
	table string
	obj   *value
}

// Wrap returns doc with the chosen stdio entries rewritten to run through
// "mcptape record --name SERVER -- COMMAND ARGS...", and what it did. Only
// the entries' "command" and "args" change, in place: every other byte of
// doc stays as it was, comments and order included, and Unwrap gives doc
// back byte for byte. An entry already wrapped is left alone; a named
// server that is missing, or is an HTTP server, is an error (with All,
// HTTP servers are skipped).
func (c *Client) Wrap(doc []byte, o Options) ([]byte, []Outcome, error) {
	if !filepath.IsAbs(o.Mcptape) {
		return nil, nil, fmt.Errorf("mcptape path %q is not absolute", o.Mcptape)
	}
	return c.change(doc, o, func(e entry) (Action, []edit, error) {
		switch {
		case isHTTP(e.obj):
			if o.All {
				return SkippedHTTP, nil, nil
			}
			url, _ := e.obj.getString("url")
			return "", nil, fmt.Errorf("server %q %w (url %q): wrap records stdio servers; record it with 'mcptape record --upstream %s --listen 127.0.0.1:PORT' and point the client at that address", e.name, ErrHTTP, url, url)
		case wrappedAt(e.obj) >= 0:
			return AlreadyWrapped, nil, nil
		}
		edits, err := wrapEdits(doc, e, o.Mcptape)
		return Wrapped, edits, err
	})
}

// Unwrap returns doc with the chosen wrapped entries restored to run their
// server directly, and what it did. Entries that are not wrapped are left
// alone.
func (c *Client) Unwrap(doc []byte, o Options) ([]byte, []Outcome, error) {
	return c.change(doc, o, func(e entry) (Action, []edit, error) {
		k := wrappedAt(e.obj)
		if k < 0 {
			return NotWrapped, nil, nil
		}
		return Unwrapped, unwrapEdits(doc, e.obj, k), nil
	})
}

// change finds the chosen entries of doc, asks do what to do with each
// and applies the edits.
func (c *Client) change(doc []byte, o Options, do func(entry) (Action, []edit, error)) ([]byte, []Outcome, error) {
	if !o.All && len(o.Servers) == 0 {
		return nil, nil, errors.New("no server named (give names, or --all)")
	}
	root, err := parseJSONC(doc)
	if err != nil {
		return nil, nil, err
	}
	tables := c.tables(root)
	if len(tables) == 0 {
		return nil, nil, fmt.Errorf("no server list in the file (a %s configuration has it under %s)", c.Name, c.tableHint())
	}
	var entries []entry
	for _, t := range tables {
		for _, m := range t.obj.members {
			if o.All || slices.Contains(o.Servers, m.key) {
				entries = append(entries, entry{name: m.key, table: t.label, obj: m.val})
			}
		}
	}
	for _, name := range o.Servers {
		if !slices.ContainsFunc(entries, func(e entry) bool { return e.name == name }) {
			return nil, nil, fmt.Errorf("no server %q in the file (it has %s)", name, listNames(tables))
		}
	}
	var edits []edit
	var outcomes []Outcome
	for _, e := range entries {
		if e.obj.kind != kindObject {
			return nil, nil, fmt.Errorf("server %q in %s: entry is not an object", e.name, e.table)
		}
		a, es, err := do(e)
		if err != nil {
			return nil, nil, err
		}
		edits = append(edits, es...)
		outcomes = append(outcomes, Outcome{Server: e.name, Table: e.table, Action: a})
	}
	return apply(doc, edits), outcomes, nil
}

// tableHint names where the client keeps its servers, for messages.
func (c *Client) tableHint() string {
	switch c.Name {
	case "vscode":
		return `"servers" (mcp.json) or "mcp": {"servers"} (settings.json)`
	case "claude-code":
		return `"mcpServers" or "projects": {PATH: {"mcpServers"}}`
	}
	return `"mcpServers"`
}

// listNames lists the servers of tables, for messages.
func listNames(tables []table) string {
	var names []string
	for _, t := range tables {
		for _, m := range t.obj.members {
			names = append(names, fmt.Sprintf("%q", m.key))
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// isHTTP reports an entry the client connects to by URL.
func isHTTP(e *value) bool {
	if e.get("url") != nil {
		return true
	}
	t, _ := e.getString("type")
	return t != "" && t != "stdio"
}

// TapeName is the name a wrapped server's tapes start with: the server's
// name with every byte that is not a letter, digit, '.', '_' or '-'
// replaced by '_' (so that it is a file name on every system).
func TapeName(server string) string {
	b := []byte(server)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	if s := strings.Trim(string(b), "."); s != "" {
		return s
	}
	return "server"
}

// wrappedAt returns the index of the "--" that ends mcptape's own
// arguments in a wrapped entry ("command": ".../mcptape[.exe]", "args":
// ["record", ..., "--name", NAME, ..., "--", COMMAND, ARGS...]), or -1
// when e is not one that Wrap wrote.
func wrappedAt(e *value) int {
	cmd, ok := e.getString("command")
	args := e.get("args")
	if !ok || args == nil || args.kind != kindArray || len(args.elems) < 4 {
		return -1
	}
	base := strings.ToLower(filepath.Base(strings.ReplaceAll(cmd, `\`, "/")))
	if !strings.HasPrefix(base, "mcptape") || args.elems[0].str != "record" {
		return -1
	}
	named := false
	for i, a := range args.elems {
		if a.kind != kindString {
			return -1
		}
		switch a.str {
		case "--name":
			named = true
		case "--":
			if named && i+1 < len(args.elems) {
				return i
			}
			return -1
		}
	}
	return -1
}

// edit replaces doc[start:end] with text.
type edit struct {
	start, end int
	text       string
}

// apply makes the edits (which do not overlap) on a copy of doc.
func apply(doc []byte, edits []edit) []byte {
	slices.SortFunc(edits, func(a, b edit) int { return a.start - b.start })
	var out bytes.Buffer
	at := 0
	for _, e := range edits {
		out.Write(doc[at:e.start])
		out.WriteString(e.text)
		at = e.end
	}
	out.Write(doc[at:])
	return out.Bytes()
}

// quote encodes s as a JSON string, leaving <, > and & as they are.
func quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(b.String(), "\n")
}

// argsAfterCommand is how Wrap adds "args" to an entry that had none,
// right after the command's value; Unwrap removes it when it finds it so.
const argsAfterCommand = `, "args": `

// wrapEdits rewrites a stdio entry. The command's own text moves into the
// arguments verbatim, and the new arguments go before the old ones with
// the separator those use, so that unwrapEdits can cut them out exactly.
func wrapEdits(doc []byte, e entry, mcptape string) ([]edit, error) {
	cmd := e.obj.get("command")
	if cmd == nil || cmd.kind != kindString || cmd.str == "" {
		return nil, fmt.Errorf("server %q in %s: no \"command\" to run (and no \"url\")", e.name, e.table)
	}
	prefix := []string{quote("record"), quote("--name"), quote(TapeName(e.name)), quote("--"), string(doc[cmd.start:cmd.end])}
	edits := []edit{{cmd.start, cmd.end, quote(mcptape)}}
	args := e.obj.get("args")
	switch {
	case args == nil:
		text := argsAfterCommand + "[" + strings.Join(prefix, ", ") + "]"
		edits = append(edits, edit{cmd.end, cmd.end, text})
	case args.kind != kindArray:
		return nil, fmt.Errorf("server %q in %s: \"args\" is not an array", e.name, e.table)
	case len(args.elems) == 0:
		edits = append(edits, edit{args.start + 1, args.start + 1, strings.Join(prefix, ", ")})
	default:
		sep := ", "
		if len(args.elems) > 1 {
			sep = string(doc[args.elems[0].end:args.elems[1].start])
		} else if lead := doc[args.start+1 : args.elems[0].start]; bytes.ContainsRune(lead, '\n') {
			sep = "," + string(lead)
		}
		first := args.elems[0].start
		edits = append(edits, edit{first, first, strings.Join(prefix, sep) + sep})
	}
	return edits, nil
}

// unwrapEdits undoes wrapEdits on an entry wrapped with its "--" at k.
func unwrapEdits(doc []byte, e *value, k int) []edit {
	cmd, args := e.get("command"), e.get("args")
	orig := args.elems[k+1]
	edits := []edit{{cmd.start, cmd.end, string(doc[orig.start:orig.end])}}
	first, last := args.elems[0], args.elems[len(args.elems)-1]
	switch {
	case k+2 < len(args.elems): // the original arguments stay
		edits = append(edits, edit{first.start, args.elems[k+2].start, ""})
	case string(doc[cmd.end:args.end]) == argsAfterCommand+string(doc[args.start:args.end]):
		edits = append(edits, edit{cmd.end, args.end, ""}) // Wrap added "args"
	default:
		edits = append(edits, edit{first.start, last.end, ""})
	}
	return edits
}
