package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/transport"
)

func TestInputRequestKeys(t *testing.T) {
	tests := []struct {
		name, frame string
		want        string // "key:method ..." in order; "-" when not an MRTR ask
	}{
		{"order kept", `{"id":1,"result":{"resultType":"input_required","inputRequests":{"z":{"method":"sampling/createMessage"},"a":{"method":"elicitation/create"},"m":{"method":"roots/list"}}}}`,
			"z:sampling/createMessage a:elicitation/create m:roots/list"},
		{"value without method", `{"id":1,"result":{"resultType":"input_required","inputRequests":{"a":7,"b":{"method":"roots/list"}}}}`, "a: b:roots/list"},
		{"complete result", `{"id":1,"result":{"resultType":"complete","inputRequests":{"a":{"method":"roots/list"}}}}`, "-"},
		{"state only", `{"id":1,"result":{"resultType":"input_required","requestState":"s"}}`, "-"},
		{"not an object", `{"id":1,"result":{"resultType":"input_required","inputRequests":[1]}}`, "-"},
		{"not JSON", `{"result":{"inputRequests":`, "-"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			keys, ok := inputRequestKeys([]byte(tc.frame))
			got := "-"
			if ok {
				var parts []string
				for _, k := range keys {
					parts = append(parts, k.key+":"+k.method)
				}
				got = strings.Join(parts, " ")
			}
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// keysOf builds inputKeys from "key:method" words, with short methods
// e (elicitation), s (sampling) and r (roots).
func keysOf(s string) []inputKey {
	methods := map[string]string{"e": "elicitation/create", "s": "sampling/createMessage", "r": "roots/list"}
	var out []inputKey
	for _, w := range strings.Fields(s) {
		k, m, _ := strings.Cut(w, ":")
		out = append(out, inputKey{key: k, method: methods[m]})
	}
	return out
}

func TestMapInputKeys(t *testing.T) {
	tests := []struct {
		name, rec, live string
		want            string // "rec>live" pairs, sorted
		recLeft         string
		liveLeft        string
	}{
		{"stable keys", "a:e b:s", "b:s a:e", "", "", ""},
		{"by order within method", "q1:e s:s q2:e", "e-b:e smp:s e-a:e", "q1>e-b q2>e-a s>smp", "", ""},
		{"same key wins over order", "x:e y:e", "y:e z:e", "x>z", "", ""},
		{"same key even across methods", "k:e", "k:s", "", "", ""},
		{"recorded key without counterpart", "a:e r:r", "b:e", "a>b", "r", ""},
		{"live key without recorded answer", "a:e", "b:e c:s", "a>b", "", "c"},
		{"method mismatch", "a:e", "b:s", "", "a", "b"},
		{"nothing live", "a:e", "", "", "a", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, recLeft, liveLeft := mapInputKeys(keysOf(tc.rec), keysOf(tc.live))
			var pairs []string
			for k, v := range m {
				pairs = append(pairs, k+">"+v)
			}
			sort.Strings(pairs)
			if got := strings.Join(pairs, " "); got != tc.want {
				t.Errorf("map %q, want %q", got, tc.want)
			}
			if got := strings.Join(recLeft, " "); got != tc.recLeft {
				t.Errorf("recorded left %q, want %q", got, tc.recLeft)
			}
			if got := strings.Join(liveLeft, " "); got != tc.liveLeft {
				t.Errorf("live left %q, want %q", got, tc.liveLeft)
			}
		})
	}
}

func TestRenameKeys(t *testing.T) {
	path := []string{"params", "inputResponses"}
	tests := []struct {
		name, in string
		names    map[string]string
		want     string // "" means unchanged
	}{
		{"renamed", `{"id":2,"params":{"inputResponses":{"a":{"n":1.50},"b":{"t":"<x>"}},"requestState":"s"}}`,
			map[string]string{"a": "live-a"}, `{"id":2,"params":{"inputResponses":{"b":{"t":"<x>"},"live-a":{"n":1.50}},"requestState":"s"}}`},
		{"swap", `{"params":{"inputResponses":{"a":1,"b":2}}}`, map[string]string{"a": "b", "b": "a"}, `{"params":{"inputResponses":{"a":2,"b":1}}}`},
		{"no such key", `{"params":{"inputResponses":{"c":1}}}`, map[string]string{"a": "b"}, ""},
		{"no such path", `{"params":{"other":{"a":1}}}`, map[string]string{"a": "b"}, ""},
		{"path not an object", `{"params":{"inputResponses":[1]}}`, map[string]string{"a": "b"}, ""},
		{"empty map", `{"params":{"inputResponses":{"a":1}}}`, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, changed, err := renameKeys([]byte(tc.in), path, tc.names)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want == "" {
				want = tc.in
			}
			if string(got) != want || changed != (tc.want != "") {
				t.Errorf("got %s (changed %v), want %s", got, changed, want)
			}
		})
	}
}

func TestRewriteSubscription(t *testing.T) {
	subs := map[string][]byte{`"sub-1"`: []byte(`"mcptape-4"`), "7": []byte("5")}
	const meta = `"io.modelcontextprotocol/subscriptionId"`
	tests := []struct{ name, in, want string }{
		{"meta string", `{"jsonrpc":"2.0","method":"x","params":{"_meta":{` + meta + `:"sub-1","k":1}}}`,
			`{"jsonrpc":"2.0","method":"x","params":{"_meta":{` + meta + `:"mcptape-4","k":1}}}`},
		{"meta number written as float", `{"jsonrpc":"2.0","id":9,"method":"x","params":{"_meta":{` + meta + `:7.0}}}`,
			`{"id":9,"jsonrpc":"2.0","method":"x","params":{"_meta":{` + meta + `:5}}}`},
		{"params.subscriptionId", `{"method":"x","params":{"subscriptionId":7}}`, `{"method":"x","params":{"subscriptionId":5}}`},
		{"unknown subscription", `{"method":"x","params":{"subscriptionId":"other"}}`, ""},
		{"string is not the number", `{"method":"x","params":{"subscriptionId":"7"}}`, ""},
		{"outside params", `{"method":"x","result":{"subscriptionId":7}}`, ""},
		{"no marker", `{"method":"x","params":{"id":7}}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := rewriteSubscription([]byte(tc.in), subs)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if want == "" {
				want = tc.in
			}
			if string(got) != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}

// mrtrServer answers tools/call "mrtr" with an input_required result asking
// under the keys ask ("key:method" words, see keysOf), and accepts the
// retry only when each live key of want carries the response recorded
// under the key want names (the recorded responses hold {"from": key}).
func mrtrServer(ask string, want map[string]string) func([]byte) []string {
	return func(frame []byte) []string {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				RequestState   string `json:"requestState"`
				InputResponses map[string]struct {
					Content struct {
						From string `json:"from"`
					} `json:"content"`
				} `json:"inputResponses"`
			} `json:"params"`
		}
		if json.Unmarshal(frame, &m) != nil || m.ID == nil || m.Method != "tools/call" {
			return nil
		}
		reply := func(result string) []string {
			return []string{fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, m.ID, result)}
		}
		if m.Params.InputResponses == nil {
			var reqs []string
			for _, k := range keysOf(ask) {
				reqs = append(reqs, fmt.Sprintf(`%q:{"method":%q,"params":{}}`, k.key, k.method))
			}
			return reply(`{"resultType":"input_required","requestState":"state-LIVE","inputRequests":{` + strings.Join(reqs, ",") + `}}`)
		}
		bad := m.Params.RequestState != "state-LIVE"
		for live, rec := range want {
			if r, ok := m.Params.InputResponses[live]; !ok || r.Content.From != rec {
				bad = true
			}
		}
		if bad {
			return reply(fmt.Sprintf(`{"content":[{"type":"text","text":%q}]}`, "bad retry "+string(frame)))
		}
		return reply(`{"content":[{"type":"text","text":"accepted"}]}`)
	}
}

// mrtrTape is a recorded MRTR exchange: a tools/call asked for input under
// the keys rec ("key:method" words), and the retry answered each under its
// recorded key with {"from": key}.
func mrtrTape(t *testing.T, rec string) []*Session {
	t.Helper()
	var reqs, resps []string
	for _, k := range keysOf(rec) {
		reqs = append(reqs, fmt.Sprintf(`%q:{"method":%q,"params":{}}`, k.key, k.method))
		resps = append(resps, fmt.Sprintf(`%q:{"action":"accept","content":{"from":%q}}`, k.key, k.key))
	}
	return writeTape(t, [][2]string{
		{"c2s", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"mrtr"}}`},
		{"s2c", `{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","requestState":"state-REC","inputRequests":{` + strings.Join(reqs, ",") + `}}}`},
		{"c2s", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mrtr","requestState":"state-REC","inputResponses":{` + strings.Join(resps, ",") + `}}}`},
		{"s2c", `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"accepted"}]}}`},
	})
}

// TestReplayMRTRLiveKeys replays MRTR retries against a server that asks
// under other keys than the recorded ones: the retry must answer under the
// live keys, with the live requestState.
func TestReplayMRTRLiveKeys(t *testing.T) {
	tests := []struct {
		name      string
		rec, live string
		want      map[string]string // live key -> recorded key whose answer it must carry
		retryKeys string            // the keys of the retry, sorted
		problems  int               // "input" problems reported
		exit      int               // 1 when the live server asks for less than the recorded one
	}{
		{"same keys", "a:e b:s", "a:e b:s", map[string]string{"a": "a", "b": "b"}, "a b", 0, 0},
		{"keys renamed, matched by method and order", "q1:e s:s q2:e", "e-b:e smp:s e-a:e",
			map[string]string{"e-b": "q1", "smp": "s", "e-a": "q2"}, "e-a e-b smp", 0, 0},
		{"one key kept, one renamed", "x:e y:e", "y:e z:e", map[string]string{"y": "y", "z": "x"}, "y z", 0, 0},
		{"recorded key without counterpart", "a:e r:r", "live:e", map[string]string{"live": "a"}, "live r", 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			conn := newFakeConn(mrtrServer(tc.live, tc.want))
			rep, err := Run(context.Background(), mrtrTape(t, tc.rec), func(context.Context, *Session) (transport.Conn, error) { return conn, nil }, WithMaxSpeed())
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			rep.WriteText(&text)
			conn.mu.Lock()
			sent := append([]string(nil), conn.sent...)
			conn.mu.Unlock()
			s := rep.Sessions[0]
			if rep.ExitCode() != tc.exit || s.Matched != 2-tc.exit || s.Differed != tc.exit {
				t.Fatalf("exit %d, matched %d:\n%s\nsent:\n%s", rep.ExitCode(), s.Matched, text.String(), strings.Join(sent, "\n"))
			}
			if len(sent) != 2 {
				t.Fatalf("sent %d frames, want 2", len(sent))
			}
			var retry struct {
				Params struct {
					InputResponses map[string]json.RawMessage `json:"inputResponses"`
				} `json:"params"`
			}
			if err := json.Unmarshal([]byte(sent[1]), &retry); err != nil {
				t.Fatal(err)
			}
			var keys []string
			for k := range retry.Params.InputResponses {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			if got := strings.Join(keys, " "); got != tc.retryKeys {
				t.Errorf("retry keys %q, want %q", got, tc.retryKeys)
			}
			if id := jsonrpc.Classify([]byte(sent[1])).ID.String(); id != "2" {
				t.Errorf("retry id %s, want 2", id)
			}
			problems := 0
			for _, p := range s.Problems {
				if p.Kind == "input" {
					problems++
				}
			}
			if problems != tc.problems {
				t.Errorf("%d input problems, want %d: %+v", problems, tc.problems, s.Problems)
			}
		})
	}
}

// TestReplaySubscriptionID replays a 2026-07-28 session that listens for
// changes and later names its subscription: the client message must name
// the live id of the listen request.
func TestReplaySubscriptionID(t *testing.T) {
	const meta = `"io.modelcontextprotocol/subscriptionId"`
	tests := []struct {
		name     string
		listenID string // recorded id of subscriptions/listen
		wantSub  string // subscription id the later message must carry
	}{
		{"string id", `"listen-REC"`, `"mcptape-2"`},
		{"number id", `40`, `2`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sessions := writeTape(t, [][2]string{
				{"c2s", `{"jsonrpc":"2.0","id":"a","method":"tools/list"}`},
				{"s2c", `{"jsonrpc":"2.0","id":"a","result":{"tools":[]}}`},
				{"c2s", `{"jsonrpc":"2.0","id":` + tc.listenID + `,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}`},
				{"s2c", `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{` + meta + `:` + tc.listenID + `}}}`},
				{"c2s", `{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"x","_meta":{` + meta + `:` + tc.listenID + `}}}`},
				{"s2c", `{"jsonrpc":"2.0","id":"b","result":{}}`},
			})
			var listenLive string
			conn := newFakeConn(func(frame []byte) []string {
				info := jsonrpc.Classify(frame)
				switch info.Method {
				case "subscriptions/listen":
					listenLive = info.ID.String()
					return []string{`{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{` + meta + `:` + listenLive + `}}}`}
				case "tools/call":
					return []string{`{"jsonrpc":"2.0","id":` + info.ID.String() + `,"result":{}}`}
				}
				return []string{`{"jsonrpc":"2.0","id":` + info.ID.String() + `,"result":{"tools":[]}}`}
			})
			rep, err := Run(context.Background(), sessions, func(context.Context, *Session) (transport.Conn, error) { return conn, nil }, WithMaxSpeed())
			if err != nil {
				t.Fatal(err)
			}
			conn.mu.Lock()
			sent := append([]string(nil), conn.sent...)
			conn.mu.Unlock()
			if len(sent) != 3 {
				t.Fatalf("sent %q", sent)
			}
			if listenLive != tc.wantSub {
				t.Errorf("listen sent with id %s, want %s", listenLive, tc.wantSub)
			}
			var call struct {
				Params struct {
					Meta map[string]json.RawMessage `json:"_meta"`
				} `json:"params"`
			}
			if err := json.Unmarshal([]byte(sent[2]), &call); err != nil {
				t.Fatal(err)
			}
			if got := string(call.Params.Meta["io.modelcontextprotocol/subscriptionId"]); got != tc.wantSub {
				t.Errorf("subscription id %s, want %s (sent %s)", got, tc.wantSub, sent[2])
			}
			if s := rep.Sessions[0]; s.Error != "" || s.Matched != 2 {
				var text bytes.Buffer
				rep.WriteText(&text)
				t.Errorf("report:\n%s", text.String())
			}
		})
	}
}

// FuzzInputKeys feeds the MRTR and subscription rewriting arbitrary frames:
// no panic, every key found is mapped or reported, and a rewritten frame
// is still JSON.
func FuzzInputKeys(f *testing.F) {
	f.Add(`{"id":1,"result":{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list"},"b":7}}}`)
	f.Add(`{"params":{"inputResponses":{"a":1},"_meta":{"io.modelcontextprotocol/subscriptionId":"s"}}}`)
	f.Add(`{"params":{"subscriptionId":3}}`)
	f.Add(`{"result":{"resultType":"input_required","inputRequests":{"a":`)
	f.Fuzz(func(t *testing.T, s string) {
		keys, ok := inputRequestKeys([]byte(s))
		if !ok && keys != nil {
			t.Fatalf("keys %v without ok", keys)
		}
		rec := []inputKey{{"a", "roots/list"}, {"q", "elicitation/create"}}
		m, recLeft, _ := mapInputKeys(rec, keys)
		if len(m)+len(recLeft) > len(rec) {
			t.Fatalf("map %v, left %v for %v", m, recLeft, rec)
		}
		out, changed, err := renameKeys([]byte(s), []string{"params", "inputResponses"}, map[string]string{"a": "b"})
		if err == nil && changed && !json.Valid(out) {
			t.Fatalf("renamed %q into invalid %q", s, out)
		}
		sub, err := rewriteSubscription([]byte(s), map[string][]byte{`"s"`: []byte(`"x"`), "3": []byte("4")})
		if err == nil && string(sub) != s && !json.Valid(sub) {
			t.Fatalf("rewrote %q into invalid %q", s, sub)
		}
	})
}
