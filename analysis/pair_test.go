package analysis

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"testing"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// id classifies a request with the given raw id and returns its ID.
func id(t *testing.T, raw string) jsonrpc.ID {
	t.Helper()
	info := jsonrpc.Classify([]byte(`{"jsonrpc":"2.0","id":` + raw + `,"method":"m"}`))
	if info.Kind != jsonrpc.KindRequest {
		t.Fatalf("id %s: kind %v", raw, info.Kind)
	}
	return info.ID
}

func TestPairerMatches(t *testing.T) {
	const c, s = tape.ClientToServer, tape.ServerToClient
	cases := []struct {
		name             string
		session, respSes string
		reqDir, respDir  tape.Direction
		reqID, respID    string
		match            bool
	}{
		{"same id", "1", "1", c, s, `7`, `7`, true},
		{"string id", "1", "1", c, s, `"a"`, `"a"`, true},
		{"escaped string is the same id", "1", "1", c, s, `"a"`, `"\u0061"`, true},
		{"integral float is the same number", "1", "1", c, s, `1`, `1.0`, true},
		{"string is not number", "1", "1", c, s, `7`, `"7"`, false},
		{"other session", "1", "2", c, s, `7`, `7`, false},
		{"server request answered by the client", "1", "1", s, c, `7`, `7`, true},
		{"negative", "1", "1", c, s, `-5`, `-5`, true},
		{"beyond int64 digits", "1", "1", c, s, `12345678901234567890`, `12345678901234567890`, true},
		{"beyond int64 differs", "1", "1", c, s, `12345678901234567890`, `12345678901234567891`, false},
		{"response in the request's direction", "1", "1", c, c, `7`, `7`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := NewPairer[int]()
			p.Open(tc.session, tc.reqDir, id(t, tc.reqID), 42)
			v, ok := p.Close(tc.respSes, Opposite(tc.respDir), id(t, tc.respID))
			if ok != tc.match || (ok && v != 42) {
				t.Fatalf("Close = %d, %v; want match %v", v, ok, tc.match)
			}
			if want := map[bool]int{true: 0, false: 1}[tc.match]; p.Len() != want {
				t.Errorf("Len = %d after Close, want %d", p.Len(), want)
			}
			if n := p.Len(); tc.match && n != 0 {
				t.Errorf("Len = %d after the match", n)
			}
		})
	}
}

func TestPairerReuseLookupPending(t *testing.T) {
	p := NewPairer[string]()
	if _, reused := p.Open("1", tape.ClientToServer, id(t, `1`), "first"); reused {
		t.Fatal("first Open reported a reuse")
	}
	prev, reused := p.Open("1", tape.ClientToServer, id(t, `1`), "second")
	if !reused || prev != "first" || p.Len() != 1 {
		t.Fatalf("reuse: prev %q, reused %v, len %d", prev, reused, p.Len())
	}
	if v, ok := p.Lookup("1", tape.ClientToServer, id(t, `1`)); !ok || v != "second" {
		t.Fatalf("Lookup = %q, %v", v, ok)
	}
	p.Open("0", tape.ServerToClient, id(t, `"z"`), "server")
	p.Open("1", tape.ClientToServer, id(t, `2`), "third")
	var got []string
	for _, pd := range p.Pending() {
		got = append(got, fmt.Sprintf("%s/%s/%s=%s", pd.Key.Session, pd.Key.Dir, pd.Key.ID, pd.Value))
	}
	want := `[0/s2c/"z"=server 1/c2s/1=second 1/c2s/2=third]`
	if fmt.Sprint(got) != want {
		t.Errorf("Pending = %v, want %s", got, want)
	}
	if Opposite("x") != "x" || Opposite(tape.ClientToServer) != tape.ServerToClient {
		t.Error("Opposite")
	}
}

func TestRecentSetForgetsTheOldest(t *testing.T) {
	r := newRecentSet(3)
	for _, k := range []string{"a", "b", "a", "c"} {
		r.add(k)
	}
	if !r.has("a") || !r.has("b") || !r.has("c") {
		t.Fatal("a recent key is missing")
	}
	// "c" pushed out the first "a"; "d" pushes out "b".
	r.add("d")
	if !r.has("a") || r.has("b") || !r.has("d") {
		t.Errorf("has a=%v b=%v d=%v, want true false true", r.has("a"), r.has("b"), r.has("d"))
	}
	r.add("e") // pushes out the second "a"
	if r.has("a") || len(r.m) != 3 {
		t.Errorf("a still present or map size %d", len(r.m))
	}
	zero := newRecentSet(0)
	zero.add("x")
	if zero.has("x") {
		t.Error("a zero-size set remembers")
	}
}

func TestPairerManySessions(t *testing.T) {
	p := NewPairer[int]()
	for i := 0; i < 200; i++ {
		p.Open(fmt.Sprint(i), tape.ClientToServer, id(t, `1`), i)
	}
	for i := 0; i < 200; i++ {
		if v, ok := p.Close(fmt.Sprint(i), tape.ClientToServer, id(t, `1`)); !ok || v != i {
			t.Fatalf("session %d: %d %v", i, v, ok)
		}
	}
	if p.Len() != 0 || len(p.scopes) > 64 {
		t.Errorf("len %d, %d scopes kept after every request was answered", p.Len(), len(p.scopes))
	}
}

// TestPairerKeyPlainInt: the ids key reads as integers without building
// their canonical key give the value, and the kind of key, that building it
// gives.
func TestPairerKeyPlainInt(t *testing.T) {
	ref := func(id jsonrpc.ID) (int64, bool) {
		k := id.AppendKey(nil)
		if len(k) == 0 || len(k) > 18 || k[0] == '"' {
			return 0, false
		}
		n, err := strconv.ParseInt(string(k), 10, 64)
		return n, err == nil && k[0] != '+'
	}
	for _, raw := range []string{`0`, `-0`, `7`, `-5`, `10`, `1e1`, `1.0`, `-0.0`, `123456789012345678`, `-12345678901234567`,
		`-123456789012345678`, `1234567890123456789`, `12345678901234567890`, `"7"`, `0.5`, `-1E2`} {
		p := NewPairer[int]()
		id := id(t, raw)
		k, num, isNum := p.key(id)
		wantNum, wantIsNum := ref(id)
		if isNum != wantIsNum || num != wantNum {
			t.Errorf("%s: key gives %d, %v; want %d, %v", raw, num, isNum, wantNum, wantIsNum)
		}
		if !isNum && string(k) != id.Key() {
			t.Errorf("%s: key %q, want %q", raw, k, id.Key())
		}
	}
}

// TestPairerMatchesMap: a random run of Open, Lookup and Close (integer
// ids, with more than fewIDs in flight at times, ids reused, ids closed
// twice, a string id now and then) gives what a plain map of the keys
// gives, step by step, and the same Pending list at the end.
func TestPairerMatchesMap(t *testing.T) {
	type refKey struct {
		dir tape.Direction
		id  string
	}
	r := rand.New(rand.NewPCG(9, 10))
	p := NewPairer[int]()
	ref := map[refKey]int{}
	raws := []string{`"s"`, `-3`, `0`}
	for n := range 40 {
		raws = append(raws, strconv.Itoa(n))
	}
	ids := map[string]jsonrpc.ID{}
	for _, raw := range raws {
		ids[raw] = id(t, raw)
	}
	for step := range 20000 {
		raw := raws[r.IntN(4+r.IntN(len(raws)-3))] // mostly a few ids, at times many
		dir := tape.ClientToServer
		if r.IntN(4) == 0 {
			dir = tape.ServerToClient
		}
		k := refKey{dir, raw}
		switch r.IntN(3) {
		case 0:
			prev, reused := p.Open("s", dir, ids[raw], step)
			want, wantReused := ref[k]
			if reused != wantReused || prev != want {
				t.Fatalf("step %d: Open(%s %s) = %d, %v; want %d, %v", step, dir, raw, prev, reused, want, wantReused)
			}
			ref[k] = step
		case 1:
			v, ok := p.Lookup("s", dir, ids[raw])
			if want, wantOK := ref[k]; ok != wantOK || v != want {
				t.Fatalf("step %d: Lookup(%s %s) = %d, %v; want %d, %v", step, dir, raw, v, ok, want, wantOK)
			}
		default:
			v, ok := p.Close("s", dir, ids[raw])
			if want, wantOK := ref[k]; ok != wantOK || v != want {
				t.Fatalf("step %d: Close(%s %s) = %d, %v; want %d, %v", step, dir, raw, v, ok, want, wantOK)
			}
			delete(ref, k)
		}
		if p.Len() != len(ref) {
			t.Fatalf("step %d: Len = %d, want %d", step, p.Len(), len(ref))
		}
	}
	pending := p.Pending()
	if len(pending) != len(ref) {
		t.Fatalf("Pending lists %d, want %d", len(pending), len(ref))
	}
	for _, pd := range pending {
		if v, ok := ref[refKey{pd.Key.Dir, pd.Key.ID}]; !ok || v != pd.Value {
			t.Errorf("Pending %s %s = %d; want %d, %v", pd.Key.Dir, pd.Key.ID, pd.Value, v, ok)
		}
	}
}

// TestPairerScopeRefs: openInt and closeInt through scope handles kept per
// session and direction give what Open and Close give, step by step, over
// more than 64 scopes, so that empty scopes are dropped (and handles go
// stale) all along.
func TestPairerScopeRefs(t *testing.T) {
	type scopeKey struct {
		session string
		dir     tape.Direction
	}
	r := rand.New(rand.NewPCG(11, 12))
	p, want := NewPairer[int](), NewPairer[int]()
	refs := map[scopeKey]*scopeRef[int]{}
	for step := range 50000 {
		session := strconv.Itoa(r.IntN(100))
		dir := tape.ClientToServer
		if r.IntN(2) == 0 {
			dir = tape.ServerToClient
		}
		sk := scopeKey{session, dir}
		ref := refs[sk]
		if ref == nil {
			ref = &scopeRef[int]{}
			refs[sk] = ref
		}
		num := int64(r.IntN(3))
		raw := id(t, strconv.FormatInt(num, 10))
		if r.IntN(2) == 0 {
			prev, reused := p.openInt(ref, session, dir, num, step)
			wprev, wreused := want.Open(session, dir, raw, step)
			if prev != wprev || reused != wreused {
				t.Fatalf("step %d: openInt(%s %s %d) = %d, %v; Open %d, %v", step, session, dir, num, prev, reused, wprev, wreused)
			}
		} else {
			v, ok := p.closeInt(ref, session, dir, num)
			wv, wok := want.Close(session, dir, raw)
			if v != wv || ok != wok {
				t.Fatalf("step %d: closeInt(%s %s %d) = %d, %v; Close %d, %v", step, session, dir, num, v, ok, wv, wok)
			}
		}
		if p.Len() != want.Len() {
			t.Fatalf("step %d: Len = %d, want %d", step, p.Len(), want.Len())
		}
	}
	if p.gen == 0 {
		t.Fatal("no scope was dropped: the handles were never stale")
	}
	if got, w := p.Pending(), want.Pending(); !reflect.DeepEqual(got, w) {
		t.Fatalf("Pending %v, want %v", got, w)
	}
}
