package jsonrpc

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
)

// crossCheck compares Classify, ClassifyMembers, Validate and Split with
// encoding/json on one input: the same validity verdict, and for valid input
// the same method, id, error code, progress token, cancel target, params or
// result members and batch members.
func crossCheck(t testing.TB, frame []byte) {
	t.Helper()
	checkMembers(t, frame)
	got := Classify(frame)
	valid := json.Valid(frame)
	if ours := !got.Violations.Has(ViolationInvalidJSON); ours != valid {
		t.Fatalf("Classify(%q) valid = %v (%v), json.Valid = %v", clip(frame), ours, got.Violations, valid)
	}
	if ours := Validate(frame) == nil; ours != valid {
		t.Fatalf("Validate(%q) valid = %v, json.Valid = %v", clip(frame), ours, valid)
	}
	if got.Kind != KindInvalid && !valid {
		t.Fatalf("Classify(%q) = %v on invalid JSON", clip(frame), got.Kind)
	}
	if !valid {
		if got.Kind != KindInvalid || got.Violations != ViolationInvalidJSON || got.ID.Raw != nil || got.Method != "" {
			t.Fatalf("Classify(%q) on invalid JSON = %+v, want only invalid-json", clip(frame), got)
		}
		return
	}
	switch bytes.TrimLeft(frame, " \t\r\n")[0] {
	case '[':
		checkBatch(t, frame, got)
	case '{':
		checkObject(t, frame, got)
	default:
		if got.Kind != KindInvalid || !got.Violations.Has(ViolationNotObject) {
			t.Fatalf("Classify(%q) = %v %v, want not-object", clip(frame), got.Kind, got.Violations)
		}
	}
}

func checkBatch(t testing.TB, frame []byte, got Info) {
	t.Helper()
	var members []json.RawMessage
	if err := json.Unmarshal(frame, &members); err != nil {
		t.Fatalf("json.Unmarshal(%q) batch: %v", clip(frame), err)
	}
	if got.Kind != KindBatch || got.BatchLen != len(members) || got.Violations.Has(ViolationEmptyBatch) != (len(members) == 0) {
		t.Fatalf("Classify(%q) = %v len %d %v, want batch of %d", clip(frame), got.Kind, got.BatchLen, got.Violations, len(members))
	}
	split, err := Split(frame)
	if err != nil || len(split) != len(members) {
		t.Fatalf("Split(%q) = %d members, %v; want %d", clip(frame), len(split), err, len(members))
	}
	for i := range members {
		if !bytes.Equal(split[i], members[i]) {
			t.Fatalf("Split(%q)[%d] = %q, encoding/json %q", clip(frame), i, split[i], members[i])
		}
	}
}

func checkObject(t testing.TB, frame []byte, got Info) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(frame, &m); err != nil {
		t.Fatalf("json.Unmarshal(%q): %v", clip(frame), err)
	}
	if raw, ok := m["id"]; ok != (got.ID.Type != IDAbsent) || !bytes.Equal(raw, got.ID.Raw) {
		t.Fatalf("Classify(%q).ID = %q, encoding/json %q (present %v)", clip(frame), got.ID.Raw, raw, ok)
	}
	method, isString := stringValue(m["method"])
	if isString && got.Method != method {
		t.Fatalf("Classify(%q).Method = %q, encoding/json %q", clip(frame), got.Method, method)
	}
	if _, ok := m["method"]; ok && !isString && !got.Violations.Has(ViolationBadMethod) {
		t.Fatalf("Classify(%q): non-string method without bad-method", clip(frame))
	}
	wantKind := KindInvalid
	_, hasID := m["id"]
	_, hasResult := m["result"]
	_, hasError := m["error"]
	switch _, hasMethod := m["method"]; {
	case hasMethod && hasID:
		wantKind = KindRequest
	case hasMethod:
		wantKind = KindNotification
	case hasError:
		wantKind = KindError
	case hasResult:
		wantKind = KindResponse
	}
	if got.Kind != wantKind {
		t.Fatalf("Classify(%q).Kind = %v, want %v", clip(frame), got.Kind, wantKind)
	}
	version, ok := stringValue(m["jsonrpc"])
	if bad := got.Violations&(ViolationWrongJSONRPC|ViolationMissingJSONRPC) != 0; bad == (ok && version == "2.0") {
		t.Fatalf("Classify(%q): jsonrpc %q but violations %v", clip(frame), version, got.Violations)
	}
	if got.Kind == KindError {
		var e map[string]json.RawMessage
		var code int64
		wantCode := json.Unmarshal(m["error"], &e) == nil && e != nil &&
			len(e["code"]) > 0 && e["code"][0] != 'n' && json.Unmarshal(e["code"], &code) == nil
		if got.HasErrorCode != wantCode || got.ErrorCode != code {
			t.Fatalf("Classify(%q) code = %d,%v; encoding/json %d,%v", clip(frame), got.ErrorCode, got.HasErrorCode, code, wantCode)
		}
	}
	params := object(m["params"])
	var wantToken, wantCancel json.RawMessage
	switch {
	case got.Kind == KindRequest:
		wantToken = object(params["_meta"])["progressToken"]
	case got.Kind == KindNotification && got.Method == MethodProgress:
		wantToken = params["progressToken"]
	case got.Kind == KindNotification && got.Method == MethodCancelled:
		wantCancel = params["requestId"]
	}
	if !bytes.Equal(got.ProgressToken.Raw, wantToken) || !bytes.Equal(got.CancelTarget.Raw, wantCancel) {
		t.Fatalf("Classify(%q) token %q cancel %q; encoding/json %q %q", clip(frame),
			got.ProgressToken.Raw, got.CancelTarget.Raw, wantToken, wantCancel)
	}
}

// stringValue decodes raw when it is a JSON string.
func stringValue(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// object decodes raw when it is a JSON object (nil otherwise).
func object(raw json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

// seedFrames are the valid and invalid frames the mutation test and the
// fuzz targets start from.
func seedFrames() [][]byte {
	var seeds [][]byte
	for _, tc := range classifyCases {
		seeds = append(seeds, []byte(tc.frame))
	}
	seeds = append(seeds,
		requestFrame(), responseFrame(400), resultFrame(300),
		[]byte(`[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}]`),
		[]byte(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"_meta":{"progressToken":"\u0041b"},"name":"sleep"}}`),
		[]byte(`{"meth\u006fd":"notifications/progress","params":{"progress\u0054oken":"t"},"jsonrpc":"2.0"}`),
	)
	return seeds
}

// mutate returns a copy of b with a few random edits: byte flips, inserted
// JSON punctuation, deletions and duplications of a range.
func mutate(r *rand.Rand, b []byte) []byte {
	out := append([]byte(nil), b...)
	const alphabet = `{}[]",:\ 0123456789.eE-+tfnul/` + "\x00\x1f\x7f\xff\xc3\r\n"
	for range 1 + r.IntN(3) {
		if len(out) == 0 {
			out = append(out, alphabet[r.IntN(len(alphabet))])
			continue
		}
		i := r.IntN(len(out))
		switch r.IntN(5) {
		case 0:
			out[i] = alphabet[r.IntN(len(alphabet))]
		case 1:
			out = append(out[:i], append([]byte{alphabet[r.IntN(len(alphabet))]}, out[i:]...)...)
		case 2:
			j := min(len(out), i+1+r.IntN(8))
			out = append(out[:i], out[j:]...)
		case 3:
			j := min(len(out), i+1+r.IntN(16))
			out = append(out[:j], append(append([]byte(nil), out[i:j]...), out[j:]...)...)
		case 4:
			out = out[:i]
		}
	}
	return out
}

func TestCrossCheckEncodingJSON(t *testing.T) {
	seeds := seedFrames()
	for _, s := range seeds {
		crossCheck(t, s)
	}
	r := rand.New(rand.NewPCG(1, 2))
	n := 20000
	if testing.Short() {
		n = 3000
	}
	for range n {
		crossCheck(t, mutate(r, seeds[r.IntN(len(seeds))]))
	}
}

func TestValidateOffsets(t *testing.T) {
	tests := []struct {
		frame  string
		offset int
		msg    string
	}{
		{``, 0, "empty frame"},
		{`{"a":1,}`, 7, "object key is not a string"},
		{`[1 2]`, 3, "expected ',' or ']'"},
		{`{"a":"b`, 5, "unterminated string"},
		{`{"a":"\q"}`, 6, "invalid escape"},
		{`{"a":tru}`, 5, "invalid literal"},
		{`{} {}`, 3, "data after"},
		{"{\"a\":\"\x01\"}", 6, "control character"},
	}
	for _, tc := range tests {
		err := Validate([]byte(tc.frame))
		var se *SyntaxError
		if !errors.As(err, &se) || se.Offset != tc.offset || !strings.Contains(se.Msg, tc.msg) {
			t.Errorf("Validate(%q) = %v, want offset %d %q", tc.frame, err, tc.offset, tc.msg)
		}
	}
}

// TestVersionPrefix: frames that start with the compact version member,
// which message takes at once, followed by everything that may or may not
// come after it, agree with encoding/json (validity, version verdict
// when the key repeats, the rest of the message).
func TestVersionPrefix(t *testing.T) {
	for _, rest := range []string{
		``, `}`, ` }`, `,`, `,}`, `x}`, `"}`, `,"id":1,"method":"m"}`, ` , "id" : 1 , "method" : "m" } `,
		`,"jsonrpc":"1.0","method":"m"}`, `,"jsonrpc":2,"method":"m"}`, `,"method":"m","jsonrpc":"2.0"}`,
		`,"result":{},"id":3}`, `,"id":3,"result":{}}x`, `,"id":3,"result":{}} `, `}}`, `,"method":"m"`, `]`,
		`,"method":"notifications/progress","params":{"progressToken":1,"progress":2}}`,
	} {
		crossCheck(t, []byte(versionPrefix+rest))
	}
	// The prefix not at the start of the frame, or cut short.
	for _, frame := range []string{` {"jsonrpc":"2.0","method":"m"}`, `{"jsonrpc":"2.0`, `{"jsonrpc":"2.01","method":"m"}`} {
		crossCheck(t, []byte(frame))
	}
}

// TestCompactAndSpacedAgree: each valid seed frame, compacted and then
// spaced out (json.Indent, and whitespace around every token), classifies
// the same way, members included: the compact fast paths (objIter.next,
// the version prefix) and the general ones (objIter.nextAny) read the
// same messages. Mutated spaced frames are cross-checked too.
func TestCompactAndSpacedAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, seed := range seedFrames() {
		var compact bytes.Buffer
		if json.Compact(&compact, seed) != nil {
			continue
		}
		var indented, spaced bytes.Buffer
		if err := json.Indent(&indented, compact.Bytes(), " ", "\t"); err != nil {
			t.Fatal(err)
		}
		inString, escaped := false, false
		for _, c := range indented.Bytes() {
			switch {
			case inString:
				inString = escaped || c != '"'
				escaped = !escaped && c == '\\'
			case c == '"':
				inString = true
			case c == ',' || c == ':' || c == '{' || c == '[' || c == '}' || c == ']':
				spaced.WriteString(" \r\n")
			}
			spaced.WriteByte(c)
		}
		want := Classify(compact.Bytes())
		wantMembers := memberTexts(compact.Bytes())
		for _, frame := range [][]byte{indented.Bytes(), spaced.Bytes()} {
			crossCheck(t, frame)
			got := Classify(frame)
			if got.Kind != want.Kind || got.Violations != want.Violations || got.Method != want.Method ||
				compactText(got.ID.Raw) != compactText(want.ID.Raw) || got.ErrorCode != want.ErrorCode {
				t.Fatalf("Classify(%q) = %+v; compact %+v", frame, got, want)
			}
			if gotMembers := memberTexts(frame); strings.Join(gotMembers, "|") != strings.Join(wantMembers, "|") {
				t.Fatalf("members of %q = %q; compact %q", frame, gotMembers, wantMembers)
			}
			for range 200 {
				crossCheck(t, mutate(r, frame))
			}
		}
	}
}

// memberTexts lists ClassifyMembers' members of frame as key=value texts,
// whitespace removed.
func memberTexts(frame []byte) []string {
	var info Info
	var out []string
	for _, m := range ClassifyMembers(frame, &info, nil) {
		out = append(out, string(m.Key.Of(frame))+"="+compactText(m.Value.Of(frame)))
	}
	return out
}

// compactText is raw JSON with its whitespace removed (raw itself when it
// is not JSON).
func compactText(raw []byte) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// TestTopKey: frames made of the members topKey reads at once (and near
// misses: whitespace around them, other keys that start alike, other
// value types), in several orders and cut short at every byte, agree
// with encoding/json.
func TestTopKey(t *testing.T) {
	members := []string{
		`"id":1`, `"id": 1`, `"id":"a"`, `"id":null`, `"id":{}`, `"idx":1`, `"i":1`, `"id" :1`,
		`"method":"tools/call"`, `"method": "m"`, `"method":1`, `"methods":"m"`, `"method" :"m"`,
		`"params":{"name":"x","_meta":{"progressToken":1}}`, `"params":[]`, `"params": {}`, `"params":}`,
		`"result":{"content":[]}`, `"result":null`, `"results":{}`,
		`"error":{"code":-1,"message":"m"}`, `"error":1`, `"error" :{}`, `"errors":{}`,
		`"jsonrpc":"2.0"`, `"x":[1,2]`,
	}
	r := rand.New(rand.NewPCG(7, 8))
	for range 3000 {
		frame := []byte(`{"jsonrpc":"2.0"`)
		for range 1 + r.IntN(4) {
			sep := ","
			if r.IntN(8) == 0 {
				sep = " , "
			}
			frame = append(append(frame, sep...), members[r.IntN(len(members))]...)
		}
		frame = append(frame, '}')
		crossCheck(t, frame)
		cut := r.IntN(len(frame))
		crossCheck(t, frame[:cut:cut])
	}
}
