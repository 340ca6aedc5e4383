package jsonrpc

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// checkMembers compares ClassifyMembers with Classify (the same Info) and
// with encoding/json (the members of the last params or result object, in
// order, duplicates included).
func checkMembers(t testing.TB, frame []byte) {
	t.Helper()
	want := Classify(frame)
	dst := make([]Member, 1, 2) // not empty: ClassifyMembers must start at dst[:0]
	var got Info
	members := ClassifyMembers(frame, &got, dst)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ClassifyMembers(%q) info %+v, Classify %+v", clip(frame), got, want)
	}
	var payload json.RawMessage
	if got.Kind == KindRequest || got.Kind == KindNotification || got.Kind == KindResponse {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(frame, &m); err != nil {
			t.Fatalf("json.Unmarshal(%q): %v", clip(frame), err)
		}
		if got.Kind == KindResponse {
			payload = m["result"]
		} else {
			payload = m["params"]
		}
	}
	wantMembers := orderedMembers(t, payload)
	if len(members) != len(wantMembers) {
		t.Fatalf("ClassifyMembers(%q) = %d members, encoding/json %d", clip(frame), len(members), len(wantMembers))
	}
	for i, m := range members {
		key, ok := stringValue(m.Key.Of(frame))
		if !ok || key != wantMembers[i].key || !bytes.Equal(m.Value.Of(frame), wantMembers[i].value) {
			t.Fatalf("ClassifyMembers(%q) member %d = %s:%s, encoding/json %q:%s", clip(frame), i,
				m.Key.Of(frame), m.Value.Of(frame), wantMembers[i].key, wantMembers[i].value)
		}
		if m.KeyEscaped != bytes.ContainsRune(m.Key.Of(frame), '\\') {
			t.Fatalf("ClassifyMembers(%q) member %d: KeyEscaped %v for %s", clip(frame), i, m.KeyEscaped, m.Key.Of(frame))
		}
	}
}

type rawMember struct {
	key   string
	value json.RawMessage
}

// orderedMembers lists the members of the JSON object raw in order (nil
// when raw is not an object).
func orderedMembers(t testing.TB, raw json.RawMessage) []rawMember {
	t.Helper()
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var out []rawMember
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, rawMember{tok.(string), v})
	}
	return out
}

func TestClassifyMembers(t *testing.T) {
	tests := []struct {
		name, frame string
		want        []string // key=value, in order
	}{
		{"request params", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"a":[1,{"b":2}]},"_meta":{"progressToken":"t"}}}`,
			[]string{`"name"="echo"`, `"arguments"={"a":[1,{"b":2}]}`, `"_meta"={"progressToken":"t"}`}},
		{"notification params", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1, "progress" : 0.5 }}`,
			[]string{`"progressToken"=1`, `"progress"=0.5`}},
		{"response result", `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"a\"b"}],"isError":true}}`,
			[]string{`"content"=[{"type":"text","text":"a\"b"}]`, `"isError"=true`}},
		{"escaped key", `{"jsonrpc":"2.0","id":1,"result":{"is\u0045rror":false}}`, []string{`"is\u0045rror"=false`}},
		{"last params wins", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1},"params":{"b":2,"b":3}}`,
			[]string{`"b"=2`, `"b"=3`}},
		{"params then not an object", `{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1},"params":[1]}`, nil},
		{"result of a request is not listed", `{"jsonrpc":"2.0","id":1,"method":"m","result":{"a":1}}`, nil},
		{"params of a response is not listed", `{"jsonrpc":"2.0","id":1,"result":{"r":1},"params":{"a":1}}`, []string{`"r"=1`}},
		{"error response", `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"},"result":{"a":1}}`, nil},
		{"empty result", `{"jsonrpc":"2.0","id":1,"result":{}}`, nil},
		{"result not an object", `{"jsonrpc":"2.0","id":1,"result":"x"}`, nil},
		{"batch", `[{"jsonrpc":"2.0","id":1,"result":{"a":1}}]`, nil},
		{"invalid", `{"jsonrpc":"2.0","id":1,"result":{"a":1}`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			frame := []byte(tc.frame)
			checkMembers(t, frame)
			var info Info
			members := ClassifyMembers(frame, &info, nil)
			var got []string
			for _, m := range members {
				got = append(got, string(m.Key.Of(frame))+"="+string(m.Value.Of(frame)))
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("members %q, want %q", got, tc.want)
			}
		})
	}
}

func TestClassifyMembersDoesNotAllocate(t *testing.T) {
	frames := map[string][]byte{"request": requestFrame(), "result": resultFrame(2000), "tools/list": responseFrame(4000)}
	for name, frame := range frames {
		dst := make([]Member, 0, 8)
		var info Info
		if n := testing.AllocsPerRun(20, func() { dst = ClassifyMembers(frame, &info, dst) }); n != 0 {
			t.Errorf("%s: %v allocations, want 0", name, n)
		}
		if len(dst) == 0 {
			t.Errorf("%s: no members", name)
		}
	}
}
