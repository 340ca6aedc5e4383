package replay

import (
	"strings"
	"testing"

	"github.com/mcptape/mcptape/jsonrpc"
)

func TestIDMapAssign(t *testing.T) {
	m := newIDMap("mcptape-", ownSpace)
	tests := []struct {
		recKey string
		typ    jsonrpc.IDType
		want   string
	}{
		{"7", jsonrpc.IDNumber, "1"},
		{`"a"`, jsonrpc.IDString, `"mcptape-2"`},
		{"7", jsonrpc.IDNumber, "3"}, // a reused recorded id gets a new live id
	}
	for _, tc := range tests {
		got := string(m.assign(tc.recKey, tc.typ))
		if got != tc.want {
			t.Errorf("assign(%s) = %s, want %s", tc.recKey, got, tc.want)
		}
		if m.rec[got] != tc.recKey || string(m.live[tc.recKey]) != got {
			t.Errorf("maps after assign(%s): rec %q live %q", tc.recKey, m.rec[got], m.live[tc.recKey])
		}
	}
}

func TestRestoreRecorded(t *testing.T) {
	ids, toks := newIDMap("mcptape-", ownSpace), newIDMap("mcptape-progress-", ownSpace)
	for i := 0; i < 10; i++ {
		ids.assign(`"r`+string(rune('a'+i))+`"`, jsonrpc.IDString)
	}
	toks.assign(`"tok "1""`, jsonrpc.IDString) // keys hold the unescaped text
	toks.assign("5", jsonrpc.IDNumber)
	tests := []struct{ in, want string }{
		{`{"text":"plain"}`, `{"text":"plain"}`},
		{`{"id":"mcptape-1","text":"mcptape-10"}`, `{"id":"ra","text":"rj"}`},
		{`{"text":"token mcptape-progress-1 done"}`, `{"text":"token tok \"1\" done"}`},
		{`{"text":"mcptape-99 mcptape-x mcptape-"}`, `{"text":"mcptape-99 mcptape-x mcptape-"}`},
		{`{"text":"mcptape-progress-2"}`, `{"text":"mcptape-progress-2"}`}, // a number token is not in text form
	}
	for _, tc := range tests {
		if got := string(restoreRecorded([]byte(tc.in), ids, toks)); got != tc.want {
			t.Errorf("restoreRecorded(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestRewriteOpaque(t *testing.T) {
	values := map[string]string{"task-rec": "task-live", "state-rec": "state-live"}
	tests := []struct{ in, want string }{
		{`{"method":"tasks/get","params":{"taskId":"task-rec"}}`, `{"method":"tasks/get","params":{"taskId":"task-live"}}`},
		{`{"params":{"requestState":"state-rec","x":"task-rec"}}`, `{"params":{"requestState":"state-live","x":"task-live"}}`},
		{`{"params":{"other":"task-rec"}}`, `{"params":{"other":"task-rec"}}`}, // no opaque key: untouched
	}
	for _, tc := range tests {
		if got := string(rewriteOpaque([]byte(tc.in), values)); got != tc.want {
			t.Errorf("rewriteOpaque(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestLearnOpaque(t *testing.T) {
	rec, _ := decodeJSON([]byte(`{"result":{"task":{"taskId":"r1","status":"working"},"list":[{"requestState":"s1"}]}}`))
	live, _ := decodeJSON([]byte(`{"result":{"task":{"taskId":"l1","status":"working"},"list":[{"requestState":"s2"}]}}`))
	got := map[string]string{}
	learnOpaque(rec, live, got)
	if len(got) != 2 || got["r1"] != "l1" || got["s1"] != "s2" {
		t.Errorf("learnt %v", got)
	}
}

func TestFallbackAnswer(t *testing.T) {
	tests := []struct{ method, want string }{
		{"elicitation/create", `{"jsonrpc":"2.0","id":9,"result":{"action":"decline"}}`},
		{"sampling/createMessage", `{"jsonrpc":"2.0","id":9,"error":{"code":-1,"message":"mcptape replay: no recorded answer"}}`},
		{"roots/list", `{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"mcptape replay: no recorded answer"}}`},
		{"ping", `{"jsonrpc":"2.0","id":9,"result":{}}`},
	}
	for _, tc := range tests {
		got, _ := fallbackAnswer(tc.method, []byte("9"))
		if string(got) != tc.want {
			t.Errorf("fallback %s = %s, want %s", tc.method, got, tc.want)
		}
		if jsonrpc.Classify(got).Violations != 0 {
			t.Errorf("fallback %s is not a valid message", tc.method)
		}
	}
}

// TestUseKeys: the n-th use of a request id has its own key, which gives
// back the id's key, whatever the id holds.
func TestUseKeys(t *testing.T) {
	tests := []struct {
		key  string
		n    int
		want string
		desc string
	}{
		{`"tools-001"`, 1, `"tools-001"`, `ping, recorded id "tools-001"`},
		{`"tools-001"`, 2, `"tools-001"#2`, `ping, recorded id "tools-001" (use 2)`},
		{`"a#b"`, 1, `"a#b"`, `ping, recorded id "a#b"`},
		{`"a#b"`, 3, `"a#b"#3`, `ping, recorded id "a#b" (use 3)`},
		{`7`, 12, `7#12`, `ping, recorded id 7 (use 12)`},
		{`{"k":"#"}`, 1, `{"k":"#"}`, `ping, recorded id {"k":"#"}`},
		{`["#1"]`, 2, `["#1"]#2`, `ping, recorded id ["#1"] (use 2)`},
	}
	for _, tt := range tests {
		got := useKey(tt.key, tt.n)
		if got != tt.want || baseKey(got) != tt.key {
			t.Errorf("useKey(%s, %d) = %s, base %s; want %s, base %s", tt.key, tt.n, got, baseKey(got), tt.want, tt.key)
		}
		if d := describeRequest("ping", "", got); d != tt.desc {
			t.Errorf("describeRequest(%s) = %q, want %q", got, d, tt.desc)
		}
	}
}

// TestSharedSpaceDisjoint: the sessions of a run that share a space never
// get the same fresh number, whatever the mix of number and string ids.
func TestSharedSpaceDisjoint(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7} {
		owner := map[string]int{} // live id -> session
		for i := range n {
			m := newIDMap("mcptape-", sharedSpace(i, n))
			for k := range 30 {
				typ := jsonrpc.IDNumber
				if k%3 == 0 {
					typ = jsonrpc.IDString
				}
				live := strings.Trim(string(m.assign("1", typ)), `"`)
				live = strings.TrimPrefix(live, "mcptape-")
				if prev, ok := owner[live]; ok {
					t.Fatalf("n=%d: %s given to sessions %d and %d", n, live, prev, i)
				}
				owner[live] = i
			}
		}
	}
}
