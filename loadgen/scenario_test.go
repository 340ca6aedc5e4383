package loadgen

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/refserver"
	"github.com/mcptape/mcptape/jsonrpc"
)

const testScenario = `{
  "setup": [{"method": "tools/list"}, {"method": "tools/call", "tool": "echo", "args": {"message": "hello from {{session}}"}}],
  "steps": [
    {"method": "tools/call", "tool": "echo", "weight": 3,
     "args": {"message": "s{{session}} i{{iteration}} {{choice:red|gre\"en}} {{random:12}}"}, "think": "1ms"},
    {"method": "tools/call", "tool": "add", "args": {"a": 1, "b": 2}}
  ],
  "think": "2ms"
}`

func TestParseScenario(t *testing.T) {
	sc, err := ParseScenario(strings.NewReader(testScenario))
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Setup) != 2 || len(sc.Steps) != 2 || sc.Think != 2*time.Millisecond || sc.Steps[0].Weight != 3 ||
		!sc.Steps[0].HasThink || sc.Steps[0].Think != time.Millisecond || sc.Steps[1].HasThink || sc.Steps[1].vars != nil {
		t.Fatalf("%+v", sc)
	}
	bad := []struct{ in, want string }{
		{`{}`, "no steps"},
		{`{"steps":[{"method":"tools/call"}]}`, "step 1"},
		{`{"steps":[{"method":"ping","tool":"x"}]}`, "tool"},
		{`{"steps":[{"method":"ping","weight":0}]}`, "weight"},
		{`{"steps":[{"method":"ping","think":"soon"}]}`, "think"},
		{`{"steps":[{"method":"x","args":{"a":"{{nope}}"}}]}`, "unknown variable"},
		{`{"steps":[{"method":"x","args":{"a":"{{random:0}}"}}]}`, "random"},
		{`{"steps":[{"method":"x","args":{"a":"{{session"}}]}`, "closing"},
		{`{"setup":[{"method":"ping","weight":2}],"steps":[{"method":"ping"}]}`, "setup step 1"},
		{`{"steps":[{"method":"ping"}],"extra":1}`, "unknown field"},
		{`{"steps":[{"method":"ping"}],"think":"-1s"}`, "think"},
	}
	for _, c := range bad {
		_, err := ParseScenario(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseScenario(%s): %v, want one line with %q", c.in, err, c.want)
		}
	}
}

// TestScenarioRender fills the variables in and checks the frame is valid
// JSON with the right values.
func TestScenarioRender(t *testing.T) {
	sc, err := ParseScenario(strings.NewReader(testScenario))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := newTemplate(&sc.Steps[0], frameSpec{})
	rng := rand.New(rand.NewPCG(3, 4))
	seen := map[string]bool{}
	for i := range 50 {
		frame := tmpl.render(reqVars{session: 7, iteration: int64(i), rng: rng}).appendFrame(nil, 9)
		if info := jsonrpc.Classify(frame); info.Kind != jsonrpc.KindRequest || info.Violations != 0 {
			t.Fatalf("bad frame %s", frame)
		}
		var m struct {
			Params struct {
				Arguments struct{ Message string } `json:"arguments"`
			} `json:"params"`
		}
		if err := json.Unmarshal(frame, &m); err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(m.Params.Arguments.Message)
		if len(f) != 4 || f[0] != "s7" || f[1] != "i"+itoa(i) || len(f[3]) != 12 {
			t.Fatalf("message %q", m.Params.Arguments.Message)
		}
		seen[f[2]] = true
	}
	if !seen["red"] || !seen[`gre"en`] || len(seen) != 2 {
		t.Errorf("choices seen %v", seen)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestScenarioRun runs the scenario against the reference server: every
// session sends its two setup steps once, then weighted steps.
func TestScenarioRun(t *testing.T) {
	sc, err := ParseScenario(strings.NewReader(testScenario))
	if err != nil {
		t.Fatal(err)
	}
	url := refHTTP(t, refserver.HTTPConfig{JSONResponse: true})
	rep, err := Run(context.Background(), Target{URL: url}, sc.Steps, WithSetupCalls(sc.Setup), WithThink(sc.Think),
		WithSessions(3), WithRequests(60))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Answered != 60 || rep.ErrorTotal != 0 {
		t.Fatalf("answered %d errors %v", rep.Answered, rep.Errors)
	}
	for name, want := range map[string]int64{"setup tools/list": 3, "setup tools/call echo": 3} {
		if s := rep.Find(name); s == nil || s.Count != want {
			t.Errorf("series %q: %+v, want %d", name, s, want)
		}
	}
	echo, add := rep.Find("tools/call echo"), rep.Find("tools/call add")
	if echo == nil || add == nil || echo.Count+add.Count != 60 || echo.Count <= add.Count {
		t.Errorf("steps: echo %+v add %+v", echo, add)
	}
}

func FuzzParseScenario(f *testing.F) {
	f.Add(testScenario)
	f.Add(`{"steps":[{"method":"x","args":{"a":"{{choice:a|b}}{{random:3}}"}}]}`)
	f.Fuzz(func(t *testing.T, s string) {
		sc, err := ParseScenario(strings.NewReader(s))
		if err != nil {
			return
		}
		rng := rand.New(rand.NewPCG(1, 1))
		for i := range sc.Steps {
			frame := newTemplate(&sc.Steps[i], frameSpec{}).render(reqVars{session: 1, iteration: 2, rng: rng}).appendFrame(nil, 1)
			if info := jsonrpc.Classify(frame); info.Kind != jsonrpc.KindRequest || info.Violations != 0 {
				t.Fatalf("%q: bad frame %s", s, frame)
			}
		}
	})
}
