package loadgen

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/jsonrpc"
)

func TestParseCall(t *testing.T) {
	cases := []struct {
		spec string
		want Call
		err  string
	}{
		{spec: `tools/call echo {"message":"hi"}`, want: Call{Weight: 1, Method: "tools/call", Tool: "echo", Args: json.RawMessage(`{"message":"hi"}`)}},
		{spec: `3:tools/call echo { "message" : "a b" }`, want: Call{Weight: 3, Method: "tools/call", Tool: "echo", Args: json.RawMessage(`{"message":"a b"}`)}},
		{spec: `tools/list`, want: Call{Weight: 1, Method: "tools/list"}},
		{spec: ` 2:ping `, want: Call{Weight: 2, Method: "ping"}},
		{spec: `resources/read {"uri":"x:y"}`, want: Call{Weight: 1, Method: "resources/read", Args: json.RawMessage(`{"uri":"x:y"}`)}},
		{spec: ``, err: "no method"},
		{spec: `0:ping`, err: "weight"},
		{spec: `tools/call`, err: "tool name"},
		{spec: `tools/call {"a":1}`, err: "tool name"},
		{spec: `tools/call echo {bad`, err: "not valid JSON"},
		{spec: `tools/call echo [1]`, err: "object"},
		{spec: `initialize`, err: "session setup"},
	}
	for _, c := range cases {
		got, err := ParseCall(c.spec)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseCall(%q) error %v, want %q", c.spec, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseCall(%q): %v", c.spec, err)
			continue
		}
		if got.Weight != c.want.Weight || got.Method != c.want.Method || got.Tool != c.want.Tool || string(got.Args) != string(c.want.Args) {
			t.Errorf("ParseCall(%q) = %+v, want %+v", c.spec, got, c.want)
		}
	}
}

// TestTemplates checks every frame built is a valid request with the
// right id, method, params and (when asked) progress token and metadata.
func TestTemplates(t *testing.T) {
	calls := []string{`tools/call echo {"message":"hi"}`, `tools/call noargs`, `tools/list`, `resources/read {"uri":"a"}`}
	for _, spec := range calls {
		for _, fs := range []frameSpec{{}, {progress: true}, {version: "2026-07-28"}, {progress: true, version: "2026-07-28"}} {
			c, err := ParseCall(spec)
			if err != nil {
				t.Fatal(err)
			}
			frame := newTemplate(&c, fs).appendFrame(nil, 42)
			info := jsonrpc.Classify(frame)
			if info.Kind != jsonrpc.KindRequest || string(info.ID.Raw) != "42" || info.Method != c.Method || info.Violations != 0 {
				t.Fatalf("%s %+v: bad frame %s (%+v)", spec, fs, frame, info)
			}
			if fs.progress != (string(info.ProgressToken.Raw) == "42") {
				t.Errorf("%s %+v: progress token %q in %s", spec, fs, info.ProgressToken.Raw, frame)
			}
			var m struct {
				Params map[string]json.RawMessage `json:"params"`
			}
			if err := json.Unmarshal(frame, &m); err != nil {
				t.Fatal(err)
			}
			if c.Tool != "" && string(m.Params["name"]) != `"`+c.Tool+`"` {
				t.Errorf("%s: name %s", spec, m.Params["name"])
			}
			if strings.Contains(string(m.Params["_meta"]), "protocolVersion") != (fs.version != "") {
				t.Errorf("%s %+v: _meta %s", spec, fs, m.Params["_meta"])
			}
		}
	}
}

func TestPickerWeights(t *testing.T) {
	calls := []Call{{Weight: 1, Method: "a"}, {Weight: 3, Method: "b"}}
	p := newPicker(calls, frameSpec{})
	rng := rand.New(rand.NewPCG(1, 1))
	n := map[string]int{}
	for i := 0; i < 40000; i++ {
		n[p.pick(rng).call.Method]++
	}
	if r := float64(n["b"]) / float64(n["a"]); r < 2.8 || r > 3.2 {
		t.Errorf("weight ratio %.2f, want 3", r)
	}
}

func FuzzParseCall(f *testing.F) {
	for _, s := range []string{`tools/call echo {"message":"hi"}`, `3:tools/list`, `ping`, `x {"a":[1]}`, `1:`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCall(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("multi-line error %q", err)
			}
			return
		}
		for _, fs := range []frameSpec{{}, {progress: true, version: "2026-07-28"}} {
			frame := newTemplate(&c, fs).appendFrame(nil, 7)
			if info := jsonrpc.Classify(frame); info.Kind != jsonrpc.KindRequest || info.Violations != 0 {
				t.Fatalf("%q: frame %s is not a valid request", s, frame)
			}
		}
	})
}
