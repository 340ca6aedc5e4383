package loadgen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Scenario is a workload read from a --scenario file by ParseScenario.
//
// The file is one JSON object:
//
//	{
//	  "setup": [ STEP, ... ],   // optional: sent once by every session, in order, after its handshake
//	  "steps": [ STEP, ... ],   // required: each iteration sends one, chosen by weight
//	  "think": "50ms"           // optional: closed-model pause after each step
//	}
//
// and a STEP is
//
//	{
//	  "method": "tools/call",   // required
//	  "tool": "echo",           // required for tools/call, absent otherwise
//	  "args": { ... },          // optional: tool arguments, or the method's params
//	  "weight": 3,              // optional, default 1 (steps only)
//	  "think": "100ms"          // optional: overrides the scenario's think after this step
//	}
//
// Inside the string values of "args", these variables are replaced for
// every request:
//
//	{{session}}          the session number, from 0
//	{{iteration}}        the session's request number, from 0
//	{{choice:a|b|c}}     one of the |-separated values, at random
//	                     (a string variable may also make up an object key)
//	{{random:N}}         N random letters and digits (N from 1 to 4096)
type Scenario struct {
	// Setup holds the per-session setup steps, Steps the weighted steps.
	Setup, Steps []Call
	// Think is the default pause after each step (closed model).
	Think time.Duration
}

type scenarioFile struct {
	Setup []stepFile `json:"setup"`
	Steps []stepFile `json:"steps"`
	Think string     `json:"think"`
}

type stepFile struct {
	Method string          `json:"method"`
	Tool   string          `json:"tool"`
	Args   json.RawMessage `json:"args"`
	Weight *int            `json:"weight"`
	Think  string          `json:"think"`
}

// ParseScenario reads and checks a scenario file. Errors name the step.
func ParseScenario(r io.Reader) (*Scenario, error) {
	var f scenarioFile
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	sc := &Scenario{}
	if f.Think != "" {
		d, err := parseThink(f.Think)
		if err != nil {
			return nil, fmt.Errorf("scenario: think: %w", err)
		}
		sc.Think = d
	}
	if len(f.Steps) == 0 {
		return nil, fmt.Errorf("scenario: no steps")
	}
	for i, st := range f.Setup {
		if st.Weight != nil {
			return nil, fmt.Errorf("scenario: setup step %d: setup steps have no weight", i+1)
		}
		c, err := st.call()
		if err != nil {
			return nil, fmt.Errorf("scenario: setup step %d: %w", i+1, err)
		}
		sc.Setup = append(sc.Setup, c)
	}
	for i, st := range f.Steps {
		c, err := st.call()
		if err != nil {
			return nil, fmt.Errorf("scenario: step %d: %w", i+1, err)
		}
		sc.Steps = append(sc.Steps, c)
	}
	return sc, nil
}

func parseThink(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a duration such as 50ms", s)
	}
	return d, nil
}

// call checks a step and turns it into a Call.
func (st stepFile) call() (Call, error) {
	spec := st.Method
	if st.Tool != "" {
		if st.Method != "tools/call" {
			return Call{}, fmt.Errorf("tool %q given for method %q", st.Tool, st.Method)
		}
		spec += " " + st.Tool
	}
	if len(st.Args) > 0 {
		spec += " " + string(st.Args)
	}
	if st.Weight != nil {
		if *st.Weight < 1 {
			return Call{}, fmt.Errorf("weight %d is below 1", *st.Weight)
		}
		spec = strconv.Itoa(*st.Weight) + ":" + spec
	}
	c, err := ParseCall(spec)
	if err != nil {
		return Call{}, err
	}
	if st.Think != "" {
		d, err := parseThink(st.Think)
		if err != nil {
			return Call{}, fmt.Errorf("think: %w", err)
		}
		c.Think, c.HasThink = d, true
	}
	if bytes.Contains(c.Args, []byte("{{")) {
		t, err := compileArgs(c.Args)
		if err != nil {
			return Call{}, err
		}
		c.vars = t
	}
	return c, nil
}

// argsTemplate is tool arguments with variables: literal JSON text
// between variable slots, all inside JSON strings.
type argsTemplate struct {
	lits [][]byte // len(vars)+1 pieces
	vars []argVar
}

type argVar struct {
	kind    byte // 's' session, 'i' iteration, 'c' choice, 'r' random
	n       int
	choices [][]byte // JSON string text, escapes included
}

// compileArgs parses the variables of compact JSON args.
func compileArgs(args []byte) (*argsTemplate, error) {
	t := &argsTemplate{}
	rest := args
	for {
		i := bytes.Index(rest, []byte("{{"))
		if i < 0 {
			t.lits = append(t.lits, rest)
			return t, nil
		}
		j := bytes.Index(rest[i:], []byte("}}"))
		if j < 0 {
			return nil, fmt.Errorf("args: %q has no closing }}", rest[i:])
		}
		if !insideString(args, len(args)-len(rest)+i) {
			return nil, fmt.Errorf("args: variable %s must be inside a JSON string", rest[i:i+j+2])
		}
		v, err := parseVar(string(rest[i+2 : i+j]))
		if err != nil {
			return nil, fmt.Errorf("args: %w", err)
		}
		t.lits = append(t.lits, rest[:i])
		t.vars = append(t.vars, v)
		rest = rest[i+j+2:]
	}
}

// insideString reports whether offset off of the JSON text b is inside a
// string.
func insideString(b []byte, off int) bool {
	in := false
	for i := 0; i < off; i++ {
		switch {
		case in && b[i] == '\\':
			i++
		case b[i] == '"':
			in = !in
		}
	}
	return in
}

func parseVar(s string) (argVar, error) {
	name, arg, _ := strings.Cut(s, ":")
	switch name {
	case "session":
		return argVar{kind: 's'}, nil
	case "iteration":
		return argVar{kind: 'i'}, nil
	case "choice":
		if arg == "" {
			return argVar{}, fmt.Errorf("{{choice:...}} needs values separated by |")
		}
		// The values are JSON string text already (escapes included): a
		// '|' cannot split an escape, so each piece stays valid.
		v := argVar{kind: 'c'}
		for _, c := range strings.Split(arg, "|") {
			v.choices = append(v.choices, []byte(c))
		}
		return v, nil
	case "random":
		n, err := strconv.Atoi(arg)
		if err != nil || n < 1 || n > 4096 {
			return argVar{}, fmt.Errorf("{{random:N}} needs N from 1 to 4096, got %q", arg)
		}
		return argVar{kind: 'r', n: n}, nil
	}
	return argVar{}, fmt.Errorf("unknown variable {{%s}} (session, iteration, choice:a|b, random:N)", s)
}

const randomAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// render returns the args with the variables of one request filled in.
func (t *argsTemplate) render(session int, iteration int64, rng *rand.Rand) []byte {
	var out []byte
	for i, v := range t.vars {
		out = append(out, t.lits[i]...)
		switch v.kind {
		case 's':
			out = strconv.AppendInt(out, int64(session), 10)
		case 'i':
			out = strconv.AppendInt(out, iteration, 10)
		case 'c':
			out = append(out, v.choices[rng.IntN(len(v.choices))]...)
		case 'r':
			for range v.n {
				out = append(out, randomAlphabet[rng.IntN(len(randomAlphabet))])
			}
		}
	}
	return append(out, t.lits[len(t.lits)-1]...)
}
