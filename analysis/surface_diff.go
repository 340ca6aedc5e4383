package analysis

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"

	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/internal/termsafe"
)

// Surface changes.
const (
	ChangeAdded   = "added"
	ChangeRemoved = "removed"
	ChangeChanged = "changed"
)

// SurfaceChange is one difference between two surfaces. Breaking changes
// are those that can make a client that worked fail: a removed entry, a
// new required argument, a changed type.
type SurfaceChange struct {
	Kind   string `json:"kind"` // KindTool, KindPrompt, KindResource, KindTemplate
	Name   string `json:"name"`
	Change string `json:"change"` // added, removed, changed
	// Field is the member of the definition that changed (description,
	// title, inputSchema, outputSchema, annotations, arguments...).
	Field    string `json:"field,omitempty"`
	Breaking bool   `json:"breaking"`
	Detail   string `json:"detail,omitempty"`
}

// String describes the change on one line.
func (c SurfaceChange) String() string {
	s := fmt.Sprintf("%s %s %s", c.Kind, c.Name, c.Change)
	if c.Field != "" {
		s += ": " + c.Field
	}
	if c.Detail != "" {
		s += ": " + c.Detail
	}
	if c.Breaking {
		s = "BREAKING " + s
	}
	return s
}

// NotCompared returns the kinds (KindTool...) that only one of old and
// new listed, which DiffSurface does not compare: nothing is known of
// the other side's.
func NotCompared(old, new *Surface) []string {
	var out []string
	for _, kind := range surfaceKinds {
		if slices.Contains(old.Listed, kind) != slices.Contains(new.Listed, kind) {
			out = append(out, kind)
		}
	}
	return out
}

// surfaceKinds lists the kinds of a surface in the order of its reports.
var surfaceKinds = []string{KindTool, KindPrompt, KindResource, KindTemplate}

// DiffSurface lists the changes from the surface old to new: per kind,
// by name, then by field; breaking ones are marked. A kind that one of
// the two never listed is not compared.
func DiffSurface(old, new *Surface) []SurfaceChange {
	var out []SurfaceChange
	for _, kind := range surfaceKinds {
		if !slices.Contains(old.Listed, kind) || !slices.Contains(new.Listed, kind) {
			continue
		}
		before, after := index(*old.items(kind)), index(*new.items(kind))
		for name := range before {
			if _, ok := after[name]; !ok {
				out = append(out, SurfaceChange{Kind: kind, Name: name, Change: ChangeRemoved, Breaking: true})
			}
		}
		for name, def := range after {
			prev, ok := before[name]
			if !ok {
				out = append(out, SurfaceChange{Kind: kind, Name: name, Change: ChangeAdded})
				continue
			}
			out = append(out, diffDefinition(kind, name, prev, def)...)
		}
	}
	slices.SortFunc(out, func(a, b SurfaceChange) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Change, b.Change),
			cmp.Compare(a.Field, b.Field), cmp.Compare(a.Detail, b.Detail))
	})
	return out
}

// Breaking reports whether changes hold a breaking one.
func Breaking(changes []SurfaceChange) bool {
	return slices.ContainsFunc(changes, func(c SurfaceChange) bool { return c.Breaking })
}

func index(items []SurfaceItem) map[string]map[string]any {
	m := make(map[string]map[string]any, len(items))
	for _, it := range items {
		var def map[string]any
		_ = json.Unmarshal(it.Definition, &def) // a definition that is no object compares as empty
		m[it.Name] = def
	}
	return m
}

// diffDefinition compares two definitions of one entry, member by member.
func diffDefinition(kind, name string, old, new map[string]any) []SurfaceChange {
	var out []SurfaceChange
	fields := map[string]bool{}
	for k := range old {
		fields[k] = true
	}
	for k := range new {
		fields[k] = true
	}
	for f := range fields {
		a, b := old[f], new[f]
		if reflect.DeepEqual(a, b) {
			continue
		}
		c := SurfaceChange{Kind: kind, Name: name, Change: ChangeChanged, Field: f}
		var breaking []string
		switch f {
		case "inputSchema":
			breaking = append(newRequired(a, b), changedTypes(a, b, "argument")...)
		case "outputSchema":
			breaking = changedTypes(a, b, "output field")
		case "arguments": // a prompt's
			breaking = newRequiredPromptArgs(a, b)
		}
		if len(breaking) == 0 {
			out = append(out, c)
		}
		for _, d := range breaking {
			c.Breaking, c.Detail = true, d
			out = append(out, c)
		}
	}
	return out
}

// newRequired lists the arguments required by the schema b and not by a.
func newRequired(a, b any) []string {
	was := stringSet(field(a, "required"))
	var out []string
	for name := range stringSet(field(b, "required")) {
		if !was[name] {
			out = append(out, "new required argument "+name)
		}
	}
	slices.Sort(out)
	return out
}

// changedTypes lists the properties of the schemas a and b whose type
// changed.
func changedTypes(a, b any, what string) []string {
	pa, _ := field(a, "properties").(map[string]any)
	pb, _ := field(b, "properties").(map[string]any)
	var out []string
	if ta, tb := field(a, "type"), field(b, "type"); ta != nil && tb != nil && !reflect.DeepEqual(ta, tb) {
		out = append(out, fmt.Sprintf("type %v → %v", typeText(ta), typeText(tb)))
	}
	for name, va := range pa {
		vb, ok := pb[name]
		if !ok {
			continue
		}
		ta, tb := field(va, "type"), field(vb, "type")
		if ta != nil && tb != nil && !reflect.DeepEqual(ta, tb) {
			out = append(out, fmt.Sprintf("%s %s: type %s → %s", what, name, typeText(ta), typeText(tb)))
		}
	}
	slices.Sort(out)
	return out
}

// newRequiredPromptArgs lists the prompt arguments required in b and not
// (or not as required) in a.
func newRequiredPromptArgs(a, b any) []string {
	required := func(v any) map[string]bool {
		m := map[string]bool{}
		list, _ := v.([]any)
		for _, e := range list {
			if name, ok := field(e, "name").(string); ok && field(e, "required") == true {
				m[name] = true
			}
		}
		return m
	}
	was := required(a)
	var out []string
	for name := range required(b) {
		if !was[name] {
			out = append(out, "new required argument "+name)
		}
	}
	slices.Sort(out)
	return out
}

func field(v any, key string) any {
	m, _ := v.(map[string]any)
	return m[key]
}

func stringSet(v any) map[string]bool {
	m := map[string]bool{}
	list, _ := v.([]any)
	for _, e := range list {
		if s, ok := e.(string); ok {
			m[s] = true
		}
	}
	return m
}

func typeText(v any) string {
	if list, ok := v.([]any); ok {
		parts := make([]string, len(list))
		for i, e := range list {
			parts[i] = fmt.Sprint(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	return fmt.Sprint(v)
}

// WriteSurfaceDiffText writes the changes one a line, breaking ones
// first, then a summary line that names the kinds not compared
// (NotCompared).
func WriteSurfaceDiffText(w io.Writer, changes []SurfaceChange, notCompared []string) error {
	var b strings.Builder
	var breaking int
	for _, c := range changes {
		if c.Breaking {
			breaking++
			fmt.Fprintln(&b, c)
		}
	}
	for _, c := range changes {
		if !c.Breaking {
			fmt.Fprintln(&b, c)
		}
	}
	switch {
	case len(changes) == 0 && len(notCompared) > 0:
		b.WriteString("surfaces are equal in what both list")
	case len(changes) == 0:
		b.WriteString("surfaces are equal")
	default:
		fmt.Fprintf(&b, "%s, %d breaking", english.Count(len(changes), "change"), breaking)
	}
	if len(notCompared) > 0 {
		b.WriteString("; " + NotComparedText(notCompared))
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, termsafe.String(b.String())) // names from the tapes stay text
	return err
}

// NotComparedText says which kinds were not compared, for a report.
func NotComparedText(kinds []string) string {
	return "not compared (listed on one side only): " + strings.Join(kinds, ", ")
}

// WriteSurfaceDiffJSON writes {"breaking": bool, "changes": [...]}, and
// "not_compared": [kinds] when some kind was listed on one side only.
func WriteSurfaceDiffJSON(w io.Writer, changes []SurfaceChange, notCompared []string) error {
	if changes == nil {
		changes = []SurfaceChange{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(struct {
		Breaking    bool            `json:"breaking"`
		Changes     []SurfaceChange `json:"changes"`
		NotCompared []string        `json:"not_compared,omitempty"`
	}{Breaking(changes), changes, notCompared}); err != nil {
		return fmt.Errorf("write surface diff: %w", err)
	}
	return nil
}
