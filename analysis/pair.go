package analysis

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// Key names a request in a tape: the session it belongs to, the direction
// it travelled (each direction has its own id space) and the canonical key
// of its id (jsonrpc.ID.Key).
type Key struct {
	Session string
	Dir     tape.Direction
	ID      string
}

// Opposite returns the other direction: the one a response travels in for
// a request sent in dir. Any value other than the two directions is
// returned unchanged.
func Opposite(dir tape.Direction) tape.Direction {
	switch dir {
	case tape.ClientToServer:
		return tape.ServerToClient
	case tape.ServerToClient:
		return tape.ClientToServer
	}
	return dir
}

// Pairable reports whether an id can pair a request with its response:
// MCP ids are strings or numbers. Requests with a null, boolean, object or
// array id, and responses without a usable id, are left unpaired.
func Pairable(id jsonrpc.ID) bool {
	return id.Type == jsonrpc.IDString || id.Type == jsonrpc.IDNumber
}

// scope is one session and direction: one id space.
type scope struct {
	session string
	dir     tape.Direction
}

// ids holds the requests in flight of one scope. Integer ids (the usual
// case) are keyed by value, other ids by their canonical key, so that no
// lookup or insertion of an integer id allocates. The first few integer
// ids in flight are kept in a short list (few), the others in a map
// (nums): a scope rarely has more than a few requests in flight, and
// scanning a few integers costs less than hashing one. An id is in one of
// the two only.
type ids[T any] struct {
	few  []numEntry[T] // at most fewIDs
	nums map[int64]T
	strs map[string]T
}

// numEntry is an integer id in flight and its value.
type numEntry[T any] struct {
	num int64
	v   T
}

// fewIDs is how many integer ids ids.few holds.
const fewIDs = 8

func (m *ids[T]) len() int { return len(m.few) + len(m.nums) + len(m.strs) }

// findNum returns the index in m.few of the integer id num, or -1.
func (m *ids[T]) findNum(num int64) int {
	for i := range m.few {
		if m.few[i].num == num {
			return i
		}
	}
	return -1
}

// putNum sets the value of the integer id num, returning the one it
// replaces, if any.
func (m *ids[T]) putNum(num int64, v T) (prev T, reused bool) {
	if i := m.findNum(num); i >= 0 {
		prev, m.few[i].v = m.few[i].v, v
		return prev, true
	}
	if prev, reused = m.nums[num]; reused || len(m.few) == fewIDs {
		m.nums[num] = v
		return prev, reused
	}
	m.few = append(m.few, numEntry[T]{num, v})
	return prev, false
}

// getNum returns the value of the integer id num, removing it with del.
func (m *ids[T]) getNum(num int64, del bool) (v T, ok bool) {
	if i := m.findNum(num); i >= 0 {
		v = m.few[i].v
		if del {
			last := len(m.few) - 1
			m.few[i] = m.few[last]
			m.few[last] = numEntry[T]{} // keeps no value alive
			m.few = m.few[:last]
		}
		return v, true
	}
	if len(m.nums) == 0 {
		return v, false
	}
	if v, ok = m.nums[num]; ok && del {
		delete(m.nums, num)
	}
	return v, ok
}

// Pairer matches responses to requests. It holds a value of the caller's
// (T) for each request in flight, from Open to Close, and nothing once the
// response has arrived: its memory is proportional to the requests in
// flight. Lookups by id do not allocate.
//
// Typical use, for each message item it of a tape:
//
//	case request:  p.Open(rec.Session, rec.Dir, info.ID, v)
//	case response: v, ok := p.Close(rec.Session, Opposite(rec.Dir), info.ID)
//
// A Pairer is not safe for concurrent use.
type Pairer[T any] struct {
	scopes map[scope]*ids[T]
	n      int
	buf    []byte
	last   scope   // the scope of the last lookup, and
	lastM  *ids[T] // its ids (nil when unknown)
	gen    uint64  // counts the scopes dropped: a scopeRef of another gen is stale
}

// scopeRef is the ids of one scope as a caller keeps them at hand (one
// per session and direction), so that a lookup by integer id needs no map
// lookup of its scope: valid while the Pairer has dropped no scope since
// it was set (gen).
type scopeRef[T any] struct {
	m   *ids[T]
	gen uint64
}

// scopeAt is scope through the caller's handle ref (nil for none), which
// it sets.
func (p *Pairer[T]) scopeAt(ref *scopeRef[T], session string, dir tape.Direction, create bool) *ids[T] {
	if ref == nil {
		return p.scope(session, dir, create)
	}
	if ref.m != nil && ref.gen == p.gen {
		return ref.m
	}
	m := p.scope(session, dir, create)
	if m != nil {
		*ref = scopeRef[T]{m, p.gen}
	}
	return m
}

// NewPairer returns an empty Pairer.
func NewPairer[T any]() *Pairer[T] {
	return &Pairer[T]{scopes: map[scope]*ids[T]{}}
}

// key returns the id's canonical key, and its value when it is an
// integer that fits in an int64.
func (p *Pairer[T]) key(id jsonrpc.ID) (k []byte, num int64, isNum bool) {
	if id.Type == jsonrpc.IDNumber {
		if num, ok := plainInt(id.Raw); ok { // its key is its digits: no round trip
			return nil, num, true
		}
	}
	p.buf = id.AppendKey(p.buf[:0])
	k = p.buf
	if len(k) == 0 || len(k) > 18 || k[0] == '"' {
		return k, 0, false
	}
	neg := k[0] == '-'
	digits := k
	if neg {
		digits = k[1:]
	}
	if len(digits) == 0 {
		return k, 0, false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return k, 0, false
		}
		num = num*10 + int64(c-'0')
	}
	if neg {
		num = -num
	}
	return k, num, true
}

// plainInt returns the value of raw when it is an optional '-' and 1 to 17
// digits (the numbers key keeps as integers: their canonical key is the
// same digits, or "0" for zeros).
func plainInt(raw []byte) (int64, bool) {
	digits := raw
	if len(raw) > 0 && raw[0] == '-' {
		digits = raw[1:]
	}
	if len(digits) == 0 || len(raw) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if len(digits) < len(raw) {
		n = -n
	}
	return n, true
}

// scope returns the ids of a scope, creating them when create is set.
func (p *Pairer[T]) scope(session string, dir tape.Direction, create bool) *ids[T] {
	sc := scope{session, dir}
	if p.lastM != nil && p.last == sc {
		return p.lastM
	}
	m := p.scopes[sc]
	if m == nil {
		if !create {
			return nil
		}
		m = &ids[T]{nums: map[int64]T{}, strs: map[string]T{}}
		p.scopes[sc] = m
	}
	p.last, p.lastM = sc, m
	return m
}

// Open records v for the request id sent in dir in session. When a request
// with the same id is already in flight there, Open replaces it and returns
// the previous value with reused set: the sender reused an id too early.
func (p *Pairer[T]) Open(session string, dir tape.Direction, id jsonrpc.ID, v T) (prev T, reused bool) {
	k, num, isNum := p.key(id)
	return p.open(session, dir, k, num, isNum, v)
}

// openInt is Open for an integer id whose key is num (see key): for
// callers that have the value at hand, and its scope's handle ref (or nil).
func (p *Pairer[T]) openInt(ref *scopeRef[T], session string, dir tape.Direction, num int64, v T) (prev T, reused bool) {
	if prev, reused = p.scopeAt(ref, session, dir, true).putNum(num, v); !reused {
		p.n++
	}
	return prev, reused
}

// open is Open of the id with key k, or num when isNum.
func (p *Pairer[T]) open(session string, dir tape.Direction, k []byte, num int64, isNum bool, v T) (prev T, reused bool) {
	m := p.scope(session, dir, true)
	if isNum {
		prev, reused = m.putNum(num, v)
	} else {
		prev, reused = m.strs[string(k)]
		m.strs[string(k)] = v
	}
	if !reused {
		p.n++
	}
	return prev, reused
}

// Lookup returns the value of the request id sent in dir in session, if it
// is in flight.
func (p *Pairer[T]) Lookup(session string, dir tape.Direction, id jsonrpc.ID) (v T, ok bool) {
	m := p.scope(session, dir, false)
	if m == nil {
		return v, false
	}
	k, num, isNum := p.key(id)
	if isNum {
		v, ok = m.getNum(num, false)
	} else {
		v, ok = m.strs[string(k)]
	}
	return v, ok
}

// Close removes the request id sent in dir in session and returns its
// value: call it with the response's id and Opposite of the response's
// direction. ok is false when no such request is in flight.
func (p *Pairer[T]) Close(session string, dir tape.Direction, id jsonrpc.ID) (v T, ok bool) {
	m := p.scope(session, dir, false)
	if m == nil {
		return v, false
	}
	k, num, isNum := p.key(id)
	return p.close(m, session, dir, k, num, isNum)
}

// closeInt is Close for an integer id whose key is num (see key), with
// its scope's handle ref (or nil).
func (p *Pairer[T]) closeInt(ref *scopeRef[T], session string, dir tape.Direction, num int64) (v T, ok bool) {
	m := p.scopeAt(ref, session, dir, false)
	if m == nil {
		return v, false
	}
	return p.close(m, session, dir, nil, num, true)
}

// close is Close of the id with key k, or num when isNum, in the scope's
// ids m.
func (p *Pairer[T]) close(m *ids[T], session string, dir tape.Direction, k []byte, num int64, isNum bool) (v T, ok bool) {
	if isNum {
		v, ok = m.getNum(num, true)
	} else if v, ok = m.strs[string(k)]; ok {
		delete(m.strs, string(k))
	}
	if !ok {
		return v, false
	}
	p.n--
	if m.len() == 0 && len(p.scopes) > 64 {
		// Many scopes (an HTTP tape of many sessions): drop the empty
		// ones so that memory follows what is in flight.
		delete(p.scopes, scope{session, dir})
		p.lastM = nil
		p.gen++
	}
	return v, true
}

// Len returns the number of requests in flight.
func (p *Pairer[T]) Len() int { return p.n }

// Pending returns the requests still in flight, sorted by session,
// direction and id key. Callers usually sort again by their own order.
func (p *Pairer[T]) Pending() []Pending[T] {
	out := make([]Pending[T], 0, p.n)
	for sc, m := range p.scopes {
		for _, e := range m.few {
			out = append(out, Pending[T]{Key: Key{Session: sc.session, Dir: sc.dir, ID: strconv.FormatInt(e.num, 10)}, Value: e.v})
		}
		for num, v := range m.nums {
			out = append(out, Pending[T]{Key: Key{Session: sc.session, Dir: sc.dir, ID: strconv.FormatInt(num, 10)}, Value: v})
		}
		for id, v := range m.strs {
			out = append(out, Pending[T]{Key: Key{Session: sc.session, Dir: sc.dir, ID: id}, Value: v})
		}
	}
	slices.SortFunc(out, func(a, b Pending[T]) int {
		return cmp.Or(cmp.Compare(a.Key.Session, b.Key.Session), cmp.Compare(a.Key.Dir, b.Key.Dir), cmp.Compare(a.Key.ID, b.Key.ID))
	})
	return out
}

// Pending is a request still in flight, as listed by Pairer.Pending.
type Pending[T any] struct {
	Key   Key
	Value T
}

// recentSet remembers the last n keys added to it, forgetting the oldest:
// bounded memory for "was this seen lately?" questions such as a progress
// notification for a request answered a moment ago.
type recentSet struct {
	ring []string
	next int
	m    map[string]int // key -> how many times it is in the ring
}

func newRecentSet(n int) *recentSet {
	return &recentSet{ring: make([]string, 0, n), m: make(map[string]int, n)}
}

func (r *recentSet) add(k string) {
	if cap(r.ring) == 0 {
		return
	}
	if len(r.ring) < cap(r.ring) {
		r.ring = append(r.ring, k)
	} else {
		old := r.ring[r.next]
		if r.m[old]--; r.m[old] <= 0 {
			delete(r.m, old)
		}
		r.ring[r.next] = k
		r.next = (r.next + 1) % len(r.ring)
	}
	r.m[k]++
}

func (r *recentSet) has(k string) bool { return r.m[k] > 0 }
