package jsondiff

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"sync"
)

// Kind says how a value differs.
type Kind string

// Kinds of Difference.
const (
	Changed     Kind = "changed" // same type, other value
	Added       Kind = "added"   // only in the new value
	Removed     Kind = "removed" // only in the old value
	TypeChanged Kind = "type"    // another JSON type
)

// Difference is one place where two JSON values differ.
type Difference struct {
	// Path is where, in the syntax of the package doc ("" for the root).
	Path string `json:"path"`
	Kind Kind   `json:"kind"`
	// Old and New are the raw JSON values there, copied from the inputs;
	// Old is nil for Added, New for Removed.
	Old json.RawMessage `json:"old,omitempty"`
	New json.RawMessage `json:"new,omitempty"`
}

// DefaultIgnore returns the paths ignored unless WithoutDefaults is given:
// what differs between two runs of the same MCP session.
func DefaultIgnore() []string {
	return []string{
		"id",                // request and response ids
		"params.requestId",  // the id a cancellation names
		"**._meta",          // progress tokens, related tasks, trace data...
		"**.progressToken",  // notifications/progress
		"**.sessionId",      // session ids in bodies
		"**.taskId",         // task ids chosen by the server
		"**.subscriptionId", // subscription ids
		"**.requestState",   // MRTR opaque state
		"**.createdAt",      // task timestamps
		"**.lastUpdatedAt",  //
		"**.timestamp",      // timestamps anywhere
	}
}

// DefaultMaxDiffs is how many differences Compare lists by default.
const DefaultMaxDiffs = 100

// Option configures a Comparer. A bad value is an error.
type Option func(*options) error

type options struct {
	ignore     []string
	noDefaults bool
	maxDiffs   int
}

// WithIgnore adds ignore patterns (see the package doc for the syntax).
func WithIgnore(paths ...string) Option {
	return func(o *options) error {
		for _, p := range paths {
			if _, err := compilePattern(p); err != nil {
				return err
			}
		}
		o.ignore = append(o.ignore, paths...)
		return nil
	}
}

// WithoutDefaults drops DefaultIgnore: only the paths of WithIgnore are
// ignored.
func WithoutDefaults() Option {
	return func(o *options) error { o.noDefaults = true; return nil }
}

// WithMaxDiffs sets how many differences Compare returns at most (default
// DefaultMaxDiffs); it stops comparing when it has them. n must be positive.
func WithMaxDiffs(n int) Option {
	return func(o *options) error {
		if n < 1 {
			return fmt.Errorf("max diffs %d: want at least 1", n)
		}
		o.maxDiffs = n
		return nil
	}
}

// Comparer compares JSON values with a fixed set of ignore patterns. It is
// safe for concurrent use.
type Comparer struct {
	patterns []pattern
	deep     []uint64 // per pattern, the positions of its ** segments
	ignore   []string
	maxDiffs int
	pool     sync.Pool // *walker
}

// New returns a Comparer.
func New(opts ...Option) (*Comparer, error) {
	o := options{maxDiffs: DefaultMaxDiffs}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, fmt.Errorf("jsondiff: %w", err)
		}
	}
	var paths []string
	if !o.noDefaults {
		paths = DefaultIgnore()
	}
	paths = append(paths, o.ignore...)
	c := &Comparer{maxDiffs: o.maxDiffs}
	for _, s := range paths {
		p, err := compilePattern(s)
		if err != nil {
			return nil, fmt.Errorf("jsondiff: %w", err)
		}
		var deep uint64
		for i, g := range p {
			if g.kind == segDeep {
				deep |= 1 << i
			}
		}
		c.patterns = append(c.patterns, p)
		c.deep = append(c.deep, deep)
		c.ignore = append(c.ignore, s)
	}
	c.pool.New = func() any { return &walker{c: c} }
	return c, nil
}

// Ignored returns the ignore patterns in force, defaults first.
func (c *Comparer) Ignored() []string { return append([]string(nil), c.ignore...) }

// Compare compares old with new and returns their differences, at most the
// Comparer's maximum, in document order (old's members first, then those
// only in new). Equal values give nil. An input that is not valid JSON is an
// error naming which one and where.
func (c *Comparer) Compare(old, new []byte) ([]Difference, error) {
	return c.compare(old, new, c.maxDiffs)
}

// Equal reports whether old and new are equal once the ignored paths are
// left out. It stops at the first difference.
func (c *Comparer) Equal(old, new []byte) (bool, error) {
	d, err := c.compare(old, new, 1)
	return len(d) == 0, err
}

func (c *Comparer) compare(old, new []byte, limit int) ([]Difference, error) {
	w := c.pool.Get().(*walker)
	defer c.pool.Put(w)
	if err := w.a.parse(old); err != nil {
		return nil, fmt.Errorf("jsondiff: old value: %w", err)
	}
	if err := w.b.parse(new); err != nil {
		return nil, fmt.Errorf("jsondiff: new value: %w", err)
	}
	w.diffs, w.limit, w.path = nil, limit, w.path[:0]
	w.states = w.states[:0]
	root, ignored := []uint64(nil), false
	if len(c.patterns) > 0 {
		for i := range c.patterns {
			m := c.closure(i, 1)
			ignored = ignored || m>>len(c.patterns[i])&1 == 1
			w.states = append(w.states, m)
		}
		root = w.states
	}
	if !ignored {
		w.walk(0, 0, root)
	}
	d := w.diffs
	w.diffs = nil
	w.a.data, w.b.data = nil, nil
	return d, nil
}

// errLimit stops a walk that has enough differences.
var errLimit = errors.New("limit")

// walker is the state of one comparison.
type walker struct {
	c      *Comparer
	a, b   parser
	path   []step
	states []uint64 // pattern masks of all depths, stacked
	diffs  []Difference
	limit  int
}

// The ignore patterns run as one small NFA each: a state set is a bit mask
// per pattern, bit i set when the path so far matches the pattern's first i
// segments. Masks of all depths are stacked in walker.states, one per
// pattern and depth; a nil set means no pattern can match below.

// closure adds to mask m of pattern p the positions reachable through **:
// the one after each **, as compilePattern never puts two ** in a row.
func (c *Comparer) closure(p int, m uint64) uint64 { return m | (m&c.deep[p])<<1 }

// advance pushes onto w.states the masks after taking step st from cur and
// returns them (nil when no pattern can match any more) and whether a
// pattern matches the path now.
func (w *walker) advance(cur []uint64, st *step) ([]uint64, bool) {
	if cur == nil {
		return nil, false
	}
	base := len(w.states)
	live, done := false, false
	for p, m := range cur {
		var n uint64
		if m != 0 {
			pat := w.c.patterns[p]
			for x := m; x != 0; x &= x - 1 {
				pos := bits.TrailingZeros64(x)
				if pos >= len(pat) {
					continue
				}
				if g := &pat[pos]; g.kind == segDeep {
					n |= 1 << pos
				} else if g.matches(st) {
					n |= 1 << (pos + 1)
				}
			}
			n = w.c.closure(p, n)
			done = done || n>>len(pat)&1 == 1
		}
		live = live || n != 0
		w.states = append(w.states, n)
	}
	if !live {
		w.states = w.states[:base]
		return nil, false
	}
	return w.states[base:], done
}

// walk compares node ia of a with node ib of b, at w.path with NFA states
// cur (already known not to match).
func (w *walker) walk(ia, ib int, cur []uint64) error {
	na, nb := &w.a.nodes[ia], &w.b.nodes[ib]
	if na.kind != nb.kind {
		return w.add(TypeChanged, na, nb)
	}
	switch na.kind {
	case kindNull:
		return nil
	case kindBool, kindNumber, kindString:
		ra, rb := w.a.data[na.start:na.end], w.b.data[nb.start:nb.end]
		var eq bool
		switch na.kind {
		case kindNumber:
			eq = numbersEqual(ra, rb)
		case kindString:
			eq = stringsEqual(ra, na.esc, rb, nb.esc)
		default:
			eq = ra[0] == rb[0]
		}
		if !eq {
			return w.add(Changed, na, nb)
		}
		return nil
	case kindArray:
		return w.walkArray(ia, ib, cur)
	default:
		return w.walkObject(ia, ib, cur)
	}
}

// child descends into a step: it returns the states below and whether the
// place is ignored.
func (w *walker) child(cur []uint64, st step) (states []uint64, ignored bool, mark int) {
	mark = len(w.states)
	w.path = append(w.path, st)
	states, ignored = w.advance(cur, &st)
	return states, ignored, mark
}

// up leaves a step taken by child.
func (w *walker) up(mark int) {
	w.path = w.path[:len(w.path)-1]
	w.states = w.states[:mark]
}

func (w *walker) walkArray(ia, ib int, cur []uint64) error {
	na, nb := &w.a.nodes[ia], &w.b.nodes[ib]
	ca, cb := ia+1, ib+1
	n := max(na.n, nb.n)
	for i := 0; i < n; i++ {
		states, ignored, mark := w.child(cur, step{index: i})
		var err error
		switch {
		case ignored:
		case i >= nb.n:
			err = w.add(Removed, &w.a.nodes[ca], nil)
		case i >= na.n:
			err = w.add(Added, nil, &w.b.nodes[cb])
		default:
			err = w.walk(ca, cb, states)
		}
		w.up(mark)
		if err != nil {
			return err
		}
		if i < na.n {
			ca = w.a.nodes[ca].next
		}
		if i < nb.n {
			cb = w.b.nodes[cb].next
		}
	}
	return nil
}

// smallObject is the member count up to which keys are looked up by a scan.
const smallObject = 16

func (w *walker) walkObject(ia, ib int, cur []uint64) error {
	na, nb := &w.a.nodes[ia], &w.b.nodes[ib]
	if na.n <= smallObject && nb.n <= smallObject {
		var bufA, bufB [smallObject]int
		ka, okA := plainKeys(&w.a, ia, bufA[:0])
		kb, okB := plainKeys(&w.b, ib, bufB[:0])
		if okA && okB {
			return w.walkPlainObject(ka, kb, cur)
		}
	}
	var mapA, mapB map[string]int
	if na.n > smallObject || nb.n > smallObject {
		mapA, mapB = w.keyMap(&w.a, ia), w.keyMap(&w.b, ib)
	}
	// Members of a: changed or removed.
	for k := ia + 1; k < na.next; {
		v := k + 1
		next := w.a.nodes[v].next
		if w.find(&w.a, ia, mapA, &w.a, k) == k { // last occurrence of the key
			kb := w.find(&w.b, ib, mapB, &w.a, k)
			key := &w.a.nodes[k]
			states, ignored, mark := w.child(cur, step{key: w.a.data[key.start:key.end], esc: key.esc})
			var err error
			switch {
			case ignored:
			case kb < 0:
				err = w.add(Removed, &w.a.nodes[v], nil)
			default:
				err = w.walk(v, kb+1, states)
			}
			w.up(mark)
			if err != nil {
				return err
			}
		}
		k = next
	}
	// Members only in b: added.
	for k := ib + 1; k < nb.next; {
		next := w.b.nodes[k+1].next
		if w.find(&w.b, ib, mapB, &w.b, k) == k && w.find(&w.a, ia, mapA, &w.b, k) < 0 {
			key := &w.b.nodes[k]
			_, ignored, mark := w.child(cur, step{key: w.b.data[key.start:key.end], esc: key.esc})
			var err error
			if !ignored {
				err = w.add(Added, nil, &w.b.nodes[k+1])
			}
			w.up(mark)
			if err != nil {
				return err
			}
		}
		k = next
	}
	return nil
}

// plainKeys appends the key nodes of object io of d to dst and reports
// whether its keys are plain: none escaped, no two alike.
func plainKeys(d *parser, io int, dst []int) ([]int, bool) {
	var seen uint64
	for k := io + 1; k < d.nodes[io].next; k = d.nodes[k+1].next {
		key := &d.nodes[k]
		if key.esc {
			return dst, false
		}
		raw := d.data[key.start:key.end]
		bit := uint64(1) << ((uint(len(raw))*31 + uint(raw[len(raw)-2])) & 63)
		if seen&bit != 0 {
			for _, j := range dst {
				o := &d.nodes[j]
				if string(d.data[o.start:o.end]) == string(raw) {
					return dst, false
				}
			}
		}
		seen |= bit
		dst = append(dst, k)
	}
	return dst, true
}

// walkPlainObject compares two objects with plain keys (see plainKeys),
// given their key nodes. Keys are looked up at the same rank first, as
// encoders usually write them in one order.
func (w *walker) walkPlainObject(ka, kb []int, cur []uint64) error {
	var used uint32 // members of b matched
	for i, k := range ka {
		key := &w.a.nodes[k]
		raw := w.a.data[key.start:key.end]
		j := -1
		if i < len(kb) && w.rawKey(kb[i]) == string(raw) {
			j = i
		} else {
			for x, kk := range kb {
				if w.rawKey(kk) == string(raw) {
					j = x
					break
				}
			}
		}
		states, ignored, mark := w.child(cur, step{key: raw})
		var err error
		switch {
		case j >= 0:
			used |= 1 << j
			if !ignored {
				err = w.walk(k+1, kb[j]+1, states)
			}
		case !ignored:
			err = w.add(Removed, &w.a.nodes[k+1], nil)
		}
		w.up(mark)
		if err != nil {
			return err
		}
	}
	for j, k := range kb {
		if used&(1<<j) != 0 {
			continue
		}
		key := &w.b.nodes[k]
		_, ignored, mark := w.child(cur, step{key: w.b.data[key.start:key.end]})
		var err error
		if !ignored {
			err = w.add(Added, nil, &w.b.nodes[k+1])
		}
		w.up(mark)
		if err != nil {
			return err
		}
	}
	return nil
}

// rawKey returns the raw text of key node k of b.
func (w *walker) rawKey(k int) string {
	n := &w.b.nodes[k]
	return string(w.b.data[n.start:n.end]) // no allocation: compared at once
}

// keyMap maps the unescaped keys of object io in d to the node of their last
// occurrence.
func (w *walker) keyMap(d *parser, io int) map[string]int {
	m := make(map[string]int, d.nodes[io].n)
	for k := io + 1; k < d.nodes[io].next; k = d.nodes[k+1].next {
		key := &d.nodes[k]
		m[unquote(d.data[key.start:key.end], key.esc)] = k
	}
	return m
}

// find returns the key node of the last member of object io in d whose key
// equals key node kn of doc kd, or -1.
func (w *walker) find(d *parser, io int, m map[string]int, kd *parser, kn int) int {
	key := &kd.nodes[kn]
	raw := kd.data[key.start:key.end]
	if m != nil {
		if k, ok := m[unquote(raw, key.esc)]; ok {
			return k
		}
		return -1
	}
	found := -1
	for k := io + 1; k < d.nodes[io].next; k = d.nodes[k+1].next {
		c := &d.nodes[k]
		if stringsEqual(d.data[c.start:c.end], c.esc, raw, key.esc) {
			found = k
		}
	}
	return found
}

// add records a difference at w.path.
func (w *walker) add(k Kind, na, nb *node) error {
	d := Difference{Path: formatPath(w.path), Kind: k}
	if na != nil {
		d.Old = append(json.RawMessage(nil), w.a.data[na.start:na.end]...)
	}
	if nb != nil {
		d.New = append(json.RawMessage(nil), w.b.data[nb.start:nb.end]...)
	}
	w.diffs = append(w.diffs, d)
	if len(w.diffs) >= w.limit {
		return errLimit
	}
	return nil
}
