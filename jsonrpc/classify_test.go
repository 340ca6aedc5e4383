package jsonrpc

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// classifyCase is one row of the classification table. Unset want fields
// are checked too: an absent id must be reported absent.
type classifyCase struct {
	name    string
	frame   string
	kind    Kind
	viol    Violation
	method  string
	id      string // raw id, "" when absent
	idType  IDType
	code    int64
	hasCode bool
	token   string // raw progress token
	cancel  string // raw cancel target
	batch   int
}

var classifyCases = []classifyCase{
	// Kinds.
	{name: "request", frame: `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		kind: KindRequest, method: "tools/list", id: `1`, idType: IDNumber},
	{name: "request string id", frame: `{"jsonrpc":"2.0","id":"req-1","method":"ping"}`,
		kind: KindRequest, method: "ping", id: `"req-1"`, idType: IDString},
	{name: "notification", frame: `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		kind: KindNotification, method: "notifications/initialized"},
	{name: "response", frame: `{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}`,
		kind: KindResponse, id: `7`, idType: IDNumber},
	{name: "response null result", frame: `{"jsonrpc":"2.0","id":7,"result":null}`,
		kind: KindResponse, id: `7`, idType: IDNumber},
	{name: "error", frame: `{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"Method not found"}}`,
		kind: KindError, id: `"a"`, idType: IDString, code: -32601, hasCode: true},
	{name: "error with data", frame: `{"jsonrpc":"2.0","id":2,"error":{"data":{"x":[1,2]},"message":"m","code":-32000}}`,
		kind: KindError, id: `2`, idType: IDNumber, code: -32000, hasCode: true},
	{name: "error null id", frame: `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}`,
		kind: KindError, id: `null`, idType: IDNull, code: -32700, hasCode: true},
	{name: "error absent id", frame: `{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}`,
		kind: KindError, code: -32700, hasCode: true},
	{name: "batch", frame: `[{"jsonrpc":"2.0","id":1,"method":"a"}, {"jsonrpc":"2.0","method":"b"}]`,
		kind: KindBatch, batch: 2},
	{name: "batch of garbage members", frame: `[1,"x",null,[]]`, kind: KindBatch, batch: 4},
	{name: "pretty printed with CRLF", frame: "{\r\n  \"jsonrpc\": \"2.0\",\r\n  \"id\": 3,\r\n  \"method\": \"resources/read\"\r\n}\r\n",
		kind: KindRequest, method: "resources/read", id: `3`, idType: IDNumber},
	{name: "leading whitespace and trailing CR", frame: " \t{\"jsonrpc\":\"2.0\",\"method\":\"ping\",\"id\":0}\r",
		kind: KindRequest, method: "ping", id: `0`, idType: IDNumber},
	{name: "unknown method", frame: `{"jsonrpc":"2.0","id":1,"method":"acme/doThing"}`,
		kind: KindRequest, method: "acme/doThing", id: `1`, idType: IDNumber},
	{name: "2026 request with meta", frame: `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`,
		kind: KindRequest, method: "server/discover", id: `1`, idType: IDNumber},

	// Ids of each type.
	{name: "id negative", frame: `{"jsonrpc":"2.0","id":-5,"result":{}}`, kind: KindResponse, id: `-5`, idType: IDNumber},
	{name: "id big integer", frame: `{"jsonrpc":"2.0","id":123456789012345678901234567890,"result":{}}`,
		kind: KindResponse, id: `123456789012345678901234567890`, idType: IDNumber},
	{name: "id escaped string", frame: `{"jsonrpc":"2.0","id":"a\"b\u00e9","result":{}}`,
		kind: KindResponse, id: `"a\"b\u00e9"`, idType: IDString},
	{name: "id empty string", frame: `{"jsonrpc":"2.0","id":"","method":"ping"}`,
		kind: KindRequest, method: "ping", id: `""`, idType: IDString},

	// Escapes in keys and strings.
	{name: "escaped method key", frame: `{"jsonrpc":"2.0","i\u0064":1,"meth\u006fd":"tools/call"}`,
		kind: KindRequest, method: "tools/call", id: `1`, idType: IDNumber},
	{name: "escaped method value", frame: `{"jsonrpc":"2.0","id":1,"method":"tools\/c\u0061ll"}`,
		kind: KindRequest, method: "tools/call", id: `1`, idType: IDNumber},
	{name: "escaped jsonrpc value", frame: `{"jsonrpc":"\u0032.0","method":"ping","id":1}`,
		kind: KindRequest, method: "ping", id: `1`, idType: IDNumber},
	{name: "keys are case-sensitive", frame: `{"jsonrpc":"2.0","Method":"ping","ID":1}`,
		kind: KindInvalid, viol: ViolationNotMessage},
	{name: "non-ASCII method", frame: `{"jsonrpc":"2.0","method":"😀/é"}`,
		kind: KindNotification, method: "😀/é"},
	{name: "surrogate pair method", frame: `{"jsonrpc":"2.0","method":"\ud83d\ude00"}`,
		kind: KindNotification, method: "😀"},
	{name: "lone surrogate method", frame: `{"jsonrpc":"2.0","method":"\ud83dx"}`,
		kind: KindNotification, method: "\uFFFDx"},
	{name: "escaped meta and token keys", frame: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_m\u0065ta":{"progress\u0054oken":"t"}}}`,
		kind: KindRequest, method: "tools/call", id: `1`, idType: IDNumber, token: `"t"`},
	{name: "escaped requestId key", frame: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"request\u0049d":4}}`,
		kind: KindNotification, method: "notifications/cancelled", cancel: `4`},
	{name: "escaped error keys", frame: `{"jsonrpc":"2.0","id":1,"error":{"\u0063ode":-1,"m\u0065ssage":"m"}}`,
		kind: KindError, id: `1`, idType: IDNumber, code: -1, hasCode: true},
	{name: "long escaped key is not a known key", frame: `{"jsonrpc":"2.0","id":1,"method":"m","\u0061\u0061\u0061\u0061\u0061\u0061\u0061\u0061\u0061\u0061\u0061\u0061\u0061\u0061":1}`,
		kind: KindRequest, method: "m", id: `1`, idType: IDNumber},
	{name: "nested garbage around the token", frame: `{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":[{"b":[[],{},"}",-0.0e+0,true,false,null]}],"_meta":{"progressToken":[{"x":"y"}],"progressToken":"ok"}}}`,
		kind: KindRequest, method: "x", id: `1`, idType: IDNumber, token: `"ok"`},
	{name: "meta not an object", frame: `{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":[{"progressToken":1}]}}`,
		kind: KindRequest, method: "x", id: `1`, idType: IDNumber},
	{name: "escaped quote in skipped value", frame: `{"jsonrpc":"2.0","id":1,"result":{"t":"a\\\"}\"]"}}`,
		kind: KindResponse, id: `1`, idType: IDNumber},

	// Duplicate keys: the last wins.
	{name: "duplicate id last wins", frame: `{"jsonrpc":"2.0","id":1,"method":"ping","id":"two"}`,
		kind: KindRequest, method: "ping", id: `"two"`, idType: IDString},
	{name: "duplicate method last wins", frame: `{"jsonrpc":"2.0","method":"a","method":"notifications/progress","params":{"progressToken":5}}`,
		kind: KindNotification, method: "notifications/progress", token: `5`},
	{name: "duplicate params forgets earlier", frame: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":1}},"params":{}}`,
		kind: KindRequest, method: "tools/call", id: `1`, idType: IDNumber},
	{name: "duplicate jsonrpc last wins", frame: `{"jsonrpc":"2.0","jsonrpc":"1.0","method":"ping"}`,
		kind: KindNotification, method: "ping", viol: ViolationWrongJSONRPC},

	// Progress tokens and cancel targets.
	{name: "request progress token", frame: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","_meta":{"progressToken":"token123"}}}`,
		kind: KindRequest, method: "tools/call", id: `2`, idType: IDNumber, token: `"token123"`},
	{name: "request progress token after other meta", frame: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"a":{"progressToken":9},"progressToken":42},"arguments":{"progressToken":1}}}`,
		kind: KindRequest, method: "tools/call", id: `2`, idType: IDNumber, token: `42`},
	{name: "request params.progressToken is not a request token", frame: `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"progressToken":3}}`,
		kind: KindRequest, method: "tools/call", id: `2`, idType: IDNumber},
	{name: "progress notification", frame: `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"abc123","progress":50,"total":100}}`,
		kind: KindNotification, method: "notifications/progress", token: `"abc123"`},
	{name: "progress notification params before method", frame: `{"params":{"progress":1,"progressToken":0},"method":"notifications/progress","jsonrpc":"2.0"}`,
		kind: KindNotification, method: "notifications/progress", token: `0`},
	{name: "other notification has no token", frame: `{"jsonrpc":"2.0","method":"notifications/message","params":{"progressToken":1,"_meta":{"progressToken":2}}}`,
		kind: KindNotification, method: "notifications/message"},
	{name: "cancelled", frame: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12,"reason":"user pressed stop"}}`,
		kind: KindNotification, method: "notifications/cancelled", cancel: `12`},
	{name: "cancelled string target", frame: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r-1"}}`,
		kind: KindNotification, method: "notifications/cancelled", cancel: `"r-1"`},
	{name: "cancelled without target", frame: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}`,
		kind: KindNotification, method: "notifications/cancelled"},
	{name: "requestId of another method ignored", frame: `{"jsonrpc":"2.0","method":"notifications/progress","params":{"requestId":1,"progressToken":2}}`,
		kind: KindNotification, method: "notifications/progress", token: `2`},

	// Error codes.
	{name: "error code zero", frame: `{"jsonrpc":"2.0","id":1,"error":{"code":0,"message":""}}`,
		kind: KindError, id: `1`, idType: IDNumber, code: 0, hasCode: true},
	{name: "error code minus zero", frame: `{"jsonrpc":"2.0","id":1,"error":{"code":-0,"message":"m"}}`,
		kind: KindError, id: `1`, idType: IDNumber, code: 0, hasCode: true},
	{name: "error code max int64", frame: `{"jsonrpc":"2.0","id":1,"error":{"code":9223372036854775807,"message":"m"}}`,
		kind: KindError, id: `1`, idType: IDNumber, code: 9223372036854775807, hasCode: true},
	{name: "error code min int64", frame: `{"jsonrpc":"2.0","id":1,"error":{"code":-9223372036854775808,"message":"m"}}`,
		kind: KindError, id: `1`, idType: IDNumber, code: -9223372036854775808, hasCode: true},

	// Violations, one rule each.
	{name: "not object string", frame: `"hello"`, kind: KindInvalid, viol: ViolationNotObject},
	{name: "not object number", frame: ` 42 `, kind: KindInvalid, viol: ViolationNotObject},
	{name: "not object null", frame: `null`, kind: KindInvalid, viol: ViolationNotObject},
	{name: "missing jsonrpc", frame: `{"id":1,"method":"ping"}`,
		kind: KindRequest, method: "ping", id: `1`, idType: IDNumber, viol: ViolationMissingJSONRPC},
	{name: "wrong jsonrpc", frame: `{"jsonrpc":"1.0","id":1,"method":"ping"}`,
		kind: KindRequest, method: "ping", id: `1`, idType: IDNumber, viol: ViolationWrongJSONRPC},
	{name: "jsonrpc number", frame: `{"jsonrpc":2.0,"id":1,"method":"ping"}`,
		kind: KindRequest, method: "ping", id: `1`, idType: IDNumber, viol: ViolationWrongJSONRPC},
	{name: "jsonrpc with space", frame: `{"jsonrpc":"2.0 ","id":1,"method":"ping"}`,
		kind: KindRequest, method: "ping", id: `1`, idType: IDNumber, viol: ViolationWrongJSONRPC},
	{name: "null request id", frame: `{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		kind: KindRequest, method: "ping", id: `null`, idType: IDNull, viol: ViolationNullRequestID},
	{name: "object request id", frame: `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`,
		kind: KindRequest, method: "ping", id: `{"a":1}`, idType: IDOther, viol: ViolationBadIDType},
	{name: "array response id", frame: `{"jsonrpc":"2.0","id":[1],"result":{}}`,
		kind: KindResponse, id: `[1]`, idType: IDOther, viol: ViolationBadIDType},
	{name: "bool error id", frame: `{"jsonrpc":"2.0","id":true,"error":{"code":1,"message":"m"}}`,
		kind: KindError, id: `true`, idType: IDOther, code: 1, hasCode: true, viol: ViolationBadIDType},
	{name: "fractional request id", frame: `{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		kind: KindRequest, method: "ping", id: `1.5`, idType: IDNumber, viol: ViolationNonIntegerID},
	{name: "exponent response id", frame: `{"jsonrpc":"2.0","id":1e2,"result":{}}`,
		kind: KindResponse, id: `1e2`, idType: IDNumber, viol: ViolationNonIntegerID},
	{name: "result and error", frame: `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}`,
		kind: KindError, id: `1`, idType: IDNumber, code: 1, hasCode: true, viol: ViolationResultAndError},
	{name: "id without result or error", frame: `{"jsonrpc":"2.0","id":1}`,
		kind: KindInvalid, id: `1`, idType: IDNumber, viol: ViolationNoResultOrError},
	{name: "not a message", frame: `{"jsonrpc":"2.0","hello":"world"}`, kind: KindInvalid, viol: ViolationNotMessage},
	{name: "empty object", frame: `{}`, kind: KindInvalid, viol: ViolationNotMessage | ViolationMissingJSONRPC},
	{name: "error code fraction", frame: `{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}`,
		kind: KindError, id: `1`, idType: IDNumber, viol: ViolationBadErrorCode},
	{name: "error code exponent", frame: `{"jsonrpc":"2.0","id":1,"error":{"code":1e3,"message":"m"}}`,
		kind: KindError, id: `1`, idType: IDNumber, viol: ViolationBadErrorCode},
	{name: "error code one point zero", frame: `{"jsonrpc":"2.0","id":1,"error":{"code":1.0,"message":"m"}}`,
		kind: KindError, id: `1`, idType: IDNumber, viol: ViolationBadErrorCode},
	{name: "error code string", frame: `{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}`,
		kind: KindError, id: `1`, idType: IDNumber, viol: ViolationBadErrorCode},
	{name: "error code missing", frame: `{"jsonrpc":"2.0","id":1,"error":{"message":"m"}}`,
		kind: KindError, id: `1`, idType: IDNumber, viol: ViolationBadErrorCode},
	{name: "error code overflow", frame: `{"jsonrpc":"2.0","id":1,"error":{"code":9223372036854775808,"message":"m"}}`,
		kind: KindError, id: `1`, idType: IDNumber, viol: ViolationBadErrorCode},
	{name: "error message missing", frame: `{"jsonrpc":"2.0","id":1,"error":{"code":-32603}}`,
		kind: KindError, id: `1`, idType: IDNumber, code: -32603, hasCode: true, viol: ViolationMissingErrorMessage},
	{name: "error message not string", frame: `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":null}}`,
		kind: KindError, id: `1`, idType: IDNumber, code: -32603, hasCode: true, viol: ViolationMissingErrorMessage},
	{name: "error not object", frame: `{"jsonrpc":"2.0","id":1,"error":"boom"}`,
		kind: KindError, id: `1`, idType: IDNumber, viol: ViolationErrorNotObject},
	{name: "empty batch", frame: ` [ ] `, kind: KindBatch, viol: ViolationEmptyBatch},
	{name: "method not string", frame: `{"jsonrpc":"2.0","id":1,"method":42}`,
		kind: KindRequest, id: `1`, idType: IDNumber, viol: ViolationBadMethod},
	{name: "method object notification", frame: `{"jsonrpc":"2.0","method":{"a":"b"}}`,
		kind: KindNotification, viol: ViolationBadMethod},
	{name: "method with result", frame: `{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}`,
		kind: KindRequest, method: "ping", id: `1`, idType: IDNumber, viol: ViolationMethodWithResult},
	{name: "method with error", frame: `{"jsonrpc":"2.0","method":"ping","error":{"code":1,"message":"m"}}`,
		kind: KindNotification, method: "ping", viol: ViolationMethodWithResult},
	{name: "result without id", frame: `{"jsonrpc":"2.0","result":{}}`, kind: KindResponse, viol: ViolationResultWithoutID},
	{name: "result with null id", frame: `{"jsonrpc":"2.0","id":null,"result":{}}`,
		kind: KindResponse, id: `null`, idType: IDNull, viol: ViolationResultWithoutID},
	{name: "params string", frame: `{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}`,
		kind: KindRequest, method: "ping", id: `1`, idType: IDNumber, viol: ViolationBadParams},
	{name: "params null", frame: `{"jsonrpc":"2.0","method":"ping","params":null}`,
		kind: KindNotification, method: "ping", viol: ViolationBadParams},
	{name: "params array", frame: `{"jsonrpc":"2.0","method":"ping","params":[1,2]}`,
		kind: KindNotification, method: "ping"},
	{name: "progress token object", frame: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":{"a":1}}}}`,
		kind: KindRequest, method: "tools/call", id: `1`, idType: IDNumber, token: `{"a":1}`, viol: ViolationBadProgressToken},
	{name: "progress token fraction", frame: `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":0.5,"progress":1}}`,
		kind: KindNotification, method: "notifications/progress", token: `0.5`, viol: ViolationBadProgressToken},
	{name: "progress notification without token", frame: `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`,
		kind: KindNotification, method: "notifications/progress", viol: ViolationBadProgressToken},
	{name: "cancel target null", frame: `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":null}}`,
		kind: KindNotification, method: "notifications/cancelled", cancel: `null`, viol: ViolationBadCancelTarget},
	{name: "invalid UTF-8 in a string", frame: "{\"jsonrpc\":\"2.0\",\"method\":\"log\",\"params\":{\"t\":\"a\xffb\"}}",
		kind: KindNotification, method: "log", viol: ViolationInvalidUTF8},
	{name: "invalid UTF-8 in method", frame: "{\"jsonrpc\":\"2.0\",\"method\":\"a\xffb\"}",
		kind: KindNotification, method: "a\uFFFDb", viol: ViolationInvalidUTF8},
	{name: "several at once", frame: `{"id":null,"method":"x","params":1}`,
		kind: KindRequest, method: "x", id: `null`, idType: IDNull,
		viol: ViolationMissingJSONRPC | ViolationNullRequestID | ViolationBadParams},
}

func TestClassify(t *testing.T) {
	for _, tc := range classifyCases {
		t.Run(tc.name, func(t *testing.T) {
			frame := []byte(tc.frame)
			got := Classify(frame)
			checkInfo(t, frame, got, tc)
		})
	}
}

// TestEveryViolationHasACase keeps the table honest: each rule has a row
// that expects it (and, as rows compare the whole set, fails without it).
// invalid-json has its own test below.
func TestEveryViolationHasACase(t *testing.T) {
	var covered Violation = ViolationInvalidJSON
	for _, tc := range classifyCases {
		covered |= tc.viol
	}
	for i := range violationCount {
		if v := Violation(1 << i); !covered.Has(v) {
			t.Errorf("no table row expects %v", v)
		}
	}
}

func checkInfo(t *testing.T, frame []byte, got Info, tc classifyCase) {
	t.Helper()
	if got.Kind != tc.kind {
		t.Errorf("Kind = %v, want %v", got.Kind, tc.kind)
	}
	if got.Violations != tc.viol {
		t.Errorf("Violations = %v, want %v", got.Violations, tc.viol)
	}
	if got.Method != tc.method {
		t.Errorf("Method = %q, want %q", got.Method, tc.method)
	}
	checkID(t, "ID", frame, got.ID, tc.id)
	if tc.id != "" && got.ID.Type != tc.idType {
		t.Errorf("ID.Type = %v, want %v", got.ID.Type, tc.idType)
	}
	checkID(t, "ProgressToken", frame, got.ProgressToken, tc.token)
	checkID(t, "CancelTarget", frame, got.CancelTarget, tc.cancel)
	if got.HasErrorCode != tc.hasCode || got.ErrorCode != tc.code {
		t.Errorf("ErrorCode = %d,%v, want %d,%v", got.ErrorCode, got.HasErrorCode, tc.code, tc.hasCode)
	}
	if got.BatchLen != tc.batch {
		t.Errorf("BatchLen = %d, want %d", got.BatchLen, tc.batch)
	}
}

// checkID verifies an ID's raw bytes and that its offsets point at them.
func checkID(t *testing.T, what string, frame []byte, id ID, raw string) {
	t.Helper()
	if raw == "" {
		if id.Type != IDAbsent || id.Raw != nil || id.Start != 0 || id.End != 0 {
			t.Errorf("%s = %+v, want absent", what, id)
		}
		return
	}
	if string(id.Raw) != raw {
		t.Errorf("%s.Raw = %q, want %q", what, id.Raw, raw)
	}
	if id.Start < 0 || id.End > len(frame) || id.Start > id.End || !bytes.Equal(frame[id.Start:id.End], id.Raw) {
		t.Errorf("%s offsets [%d:%d] do not hold %q", what, id.Start, id.End, id.Raw)
	}
}

func TestClassifyInvalidJSON(t *testing.T) {
	cases := []string{
		``, ` `, "\r\n", `{`, `}`, `[`, `]`, `{"jsonrpc":"2.0"`, `{"jsonrpc":"2.0",}`, `{"jsonrpc" "2.0"}`,
		`{jsonrpc:"2.0"}`, `{'jsonrpc':'2.0'}`, `{"a":1}{"b":2}`, `{"a":1} x`, `[1,]`, `[,1]`, `[1 2]`,
		`{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":-}`, `{"a":+1}`, `{"a":0x10}`, `{"a":NaN}`,
		`{"a":tru}`, `{"a":nul}`, `{"a":True}`, `{"a":"\x"}`, `{"a":"\u12"}`, `{"a":"\u12g4"}`,
		"{\"a\":\"tab\there\"}", "{\"a\":\"nl\nhere\"}", `{"a":"unterminated}`, `{"a":[1,2}`, `{"a":{"b":1]}`,
		"\xef\xbb\xbf{}", `{"id":1,"method":"ping"`, `{"id":1,"method":"ping",`, `{"id":1,"method":"pi`,
		`{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"progressToken":1,}}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1 "message":"m"}}`,
		`"\`, `"abc`, `-`, `tru`, `nul`, `[[[[`, `{"a":[{"b":[}]}`,
		// Truncations of a real frame.
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]`,
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi`,
	}
	for _, frame := range cases {
		got := Classify([]byte(frame))
		if got.Kind != KindInvalid || got.Violations != ViolationInvalidJSON {
			t.Errorf("Classify(%q) = %v %v, want invalid invalid-json", frame, got.Kind, got.Violations)
		}
		if Validate([]byte(frame)) == nil {
			t.Errorf("Validate(%q) = nil, want an error", frame)
		}
	}
}

func TestClassifyTruncatedFrames(t *testing.T) {
	// Every proper prefix of a valid object frame is invalid (and must not
	// panic); the full frame is valid.
	for _, tc := range classifyCases {
		if !strings.HasPrefix(tc.frame, "{") {
			continue
		}
		full := strings.TrimRight(tc.frame, " \r\n\t")
		for n := range len(full) {
			if got := Classify([]byte(full[:n])); got.Violations != ViolationInvalidJSON {
				t.Fatalf("%s: prefix %q classified %v %v, want invalid-json", tc.name, full[:n], got.Kind, got.Violations)
			}
		}
	}
}

func TestClassifyNesting(t *testing.T) {
	// The top-level object is level 1, so maxDepth-1 more levels fit.
	wrap := func(n int, open, inner, close string) []byte {
		return []byte(`{"jsonrpc":"2.0","id":1,"result":` + strings.Repeat(open, n) + inner + strings.Repeat(close, n) + `}`)
	}
	tests := []struct {
		name  string
		frame []byte
		valid bool
	}{
		{"arrays at the limit", wrap(maxDepth-1, "[", "", "]"), true},
		{"arrays past the limit", wrap(maxDepth, "[", "", "]"), false},
		{"objects at the limit", wrap(maxDepth-1, `{"a":`, "0", "}"), true},
		{"objects past the limit", wrap(maxDepth, `{"a":`, "0", "}"), false},
		{"mixed at the limit", wrap((maxDepth-1)/2, `[{"x":`, "0", `}]`), true},
		{"params past the limit", metaDeep(`{"jsonrpc":"2.0","method":"m","params":{"_meta":%s}}`, maxDepth-1), false},
		{"params at the limit", metaDeep(`{"jsonrpc":"2.0","method":"m","params":{"_meta":%s}}`, maxDepth-2), true},
		{"meta past the limit", metaDeep(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"a":%s}}}`, maxDepth-2), false},
		{"meta at the limit", metaDeep(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"a":%s}}}`, maxDepth-3), true},
		{"error past the limit", metaDeep(`{"jsonrpc":"2.0","id":1,"error":{"code":1,"data":%s}}`, maxDepth-1), false},
		{"error at the limit", metaDeep(`{"jsonrpc":"2.0","id":1,"error":{"code":1,"data":%s}}`, maxDepth-2), true},
		{"unbalanced", wrap(3000, "[", "", "")[:3040], false},
		{"wrong closer deep", wrap(100, "[", "", "}"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Classify(tc.frame)
			if ok := got.Violations&ViolationInvalidJSON == 0; ok != tc.valid {
				t.Fatalf("valid = %v, want %v (%v)", ok, tc.valid, got.Violations)
			}
			crossCheck(t, tc.frame)
			// The error says what is wrong: nested deeper than the
			// limit, not merely invalid.
			err := Validate(tc.frame)
			var se *SyntaxError
			if tc.valid != (err == nil) || (err != nil && !errors.As(err, &se)) {
				t.Fatalf("Validate: %v", err)
			}
			deep := strings.Contains(tc.name, "past the limit")
			if se != nil && (se.TooDeep != deep || strings.Contains(err.Error(), "deeper than the limit of 10000") != deep ||
				strings.Contains(err.Error(), "invalid JSON") == deep) {
				t.Errorf("Validate: %v (too deep %v), want too deep %v", err, se.TooDeep, deep)
			}
		})
	}
}

// metaDeep puts n nested arrays where format has %s.
func metaDeep(format string, n int) []byte {
	return []byte(strings.Replace(format, "%s", strings.Repeat("[", n)+strings.Repeat("]", n), 1))
}

func TestClassifyHugeFrame(t *testing.T) {
	for _, tc := range []struct{ size, cuts int }{{64 << 10, 41}, {16 << 20, 1}} {
		frame := resultFrame(tc.size)
		got := Classify(frame)
		if got.Kind != KindResponse || got.Violations != 0 || string(got.ID.Raw) != "42" {
			t.Fatalf("%d bytes: got %v %v id %s", len(frame), got.Kind, got.Violations, got.ID.Raw)
		}
		// Cut in several places: always invalid, never a panic.
		for n := len(frame) / (tc.cuts + 1); n < len(frame)-1; n += len(frame)/(tc.cuts+1) + 1 {
			if Classify(frame[:n]).Violations != ViolationInvalidJSON {
				t.Fatalf("%d bytes cut at %d not invalid", len(frame), n)
			}
		}
	}
}

func TestKnownMethodsInterned(t *testing.T) {
	for _, name := range knownMethods {
		frame := []byte(`{"jsonrpc":"2.0","id":1,"method":"` + name + `"}`)
		got := Classify(frame)
		if got.Method != name {
			t.Fatalf("Method = %q, want %q", got.Method, name)
		}
		if n := testing.AllocsPerRun(20, func() { Classify(frame) }); n != 0 {
			t.Errorf("%s: %v allocations, want 0", name, n)
		}
	}
}

func TestStrings(t *testing.T) {
	tests := []struct{ got, want string }{
		{KindRequest.String(), "request"},
		{KindBatch.String(), "batch"},
		{KindInvalid.String(), "invalid"},
		{Kind(99).String(), "kind(99)"},
		{IDString.String(), "string"},
		{IDType(9).String(), "idtype(9)"},
		{Violation(0).String(), "none"},
		{(ViolationMissingJSONRPC | ViolationNullRequestID).String(), "missing-jsonrpc,null-request-id"},
		{Violation(1 << 31).String(), "bit-31"},
		{TargetCancelTarget.String(), "cancel target"},
		{ID{}.String(), ""},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
	// Every violation has a distinct, parseable name.
	seen := map[string]bool{}
	for i := range violationCount {
		v := Violation(1 << i)
		name := v.String()
		if seen[name] || strings.Contains(name, "bit-") {
			t.Errorf("violation bit %d has name %q", i, name)
		}
		seen[name] = true
		if back, ok := ParseViolation(name); !ok || back != v {
			t.Errorf("ParseViolation(%q) = %v,%v", name, back, ok)
		}
		if !(v | ViolationEmptyBatch).Has(v) || Violation(0).Has(v) {
			t.Errorf("Has wrong for %v", v)
		}
	}
	if _, ok := ParseViolation("nope"); ok {
		t.Error("ParseViolation accepted an unknown name")
	}
}

func TestIDKey(t *testing.T) {
	key := func(frame string) string { return Classify([]byte(frame)).ID.Key() }
	resp := func(id string) string { return `{"jsonrpc":"2.0","id":` + id + `,"result":{}}` }
	same := [][2]string{
		{`7`, `7`}, {`"7"`, `"7"`}, {`"a"`, `"\u0061"`}, {`"\/"`, `"/"`}, {`0`, `-0`},
		{`7`, `7.0`}, {`7`, `7e0`}, {`70`, `7E1`}, {`1.5`, `15e-1`}, {`null`, `null`},
		{`"😀"`, `"\ud83d\ude00"`},
		// objects and arrays whatever their spacing, key order and the
		// spelling of their numbers and strings (a server echoing an object
		// id re-encoded)
		{`{"a":1}`, `{"a": 1}`}, {`{"a":1,"b":[2,"x"]}`, "{ \"b\" : [ 2.0 , \"\\u0078\" ] ,\n\"a\":1e0}"}, {`[]`, `[ ]`},
	}
	for _, p := range same {
		if a, b := key(resp(p[0])), key(resp(p[1])); a != b {
			t.Errorf("Key(%s) = %q, Key(%s) = %q, want equal", p[0], a, p[1], b)
		}
	}
	differ := [][2]string{
		{`7`, `"7"`}, {`"7"`, `"7 "`}, {`7`, `8`}, {`1`, `true`}, {`null`, `"null"`}, {`-1`, `1`},
		{`123456789012345678901234567890`, `123456789012345678901234567891`}, {`1.5`, `1.25`},
		{`{"a":1}`, `{"a":2}`}, {`{"a":1}`, `{"b":1}`}, {`[1,2]`, `[2,1]`}, {`{"a":"1"}`, `{"a":1}`}, {`[1]`, `1`},
	}
	for _, p := range differ {
		if a, b := key(resp(p[0])), key(resp(p[1])); a == b {
			t.Errorf("Key(%s) == Key(%s) == %q, want different", p[0], p[1], a)
		}
	}
	if k := key(`{"jsonrpc":"2.0","method":"x"}`); k != "" {
		t.Errorf("absent id key = %q, want empty", k)
	}
	if k := key(resp(`"x"`)); k != `"x"` {
		t.Errorf("string key = %q", k)
	}
	if s := Classify([]byte(resp(`"x"`))).ID.String(); s != `"x"` {
		t.Errorf("String = %q", s)
	}
}

// TestNonIntegerIDFromTheScan: the id check reads what the scan of the id
// saw (a fraction or an exponent), for the last id of the frame, whatever
// numbers come around it; it agrees with reading the id's text.
func TestNonIntegerIDFromTheScan(t *testing.T) {
	for _, id := range []string{`0`, `-0`, `12`, `1.5`, `-0.0`, `1e3`, `1E+3`, `2e-1`, `123456789012345678901234`, `"1.5"`, `[1.5]`, `{"a":1e5}`, `null`} {
		for _, frame := range []string{
			`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`,
			`{"jsonrpc":"2.0","id":` + id + `,"result":{"x":1.5}}`,
			`{"jsonrpc":"2.0","params":{"x":2.5},"id":` + id + `,"method":"m"}`,
			`{"jsonrpc":"2.0","id":3.5,"id":` + id + `,"method":"m"}`,
			`{"jsonrpc":"2.0","id":` + id + `,"id":7,"method":"m","params":[1e9]}`,
		} {
			info := Classify([]byte(frame))
			want := info.ID.Type == IDNumber && !isIntegerSyntax(info.ID.Raw)
			if got := info.Violations.Has(ViolationNonIntegerID); got != want {
				t.Errorf("%s: non-integer-id %v, want %v (id %s)", frame, got, want, info.ID.Raw)
			}
		}
	}
}

// TestIDInteger: a number id of integral value is an integer whatever its
// spelling, the same id as the plain integer (ID.Key); a true fraction,
// a string and other types are not.
func TestIDInteger(t *testing.T) {
	for raw, want := range map[string]bool{`1`: true, `1.0`: true, `1e0`: true, `10e-1`: true, `-3.00`: true, `1.5`: false,
		`1e300`: false, `"1"`: false, `null`: false, `{"a":1}`: false} {
		id := Classify([]byte(`{"jsonrpc":"2.0","id":` + raw + `,"method":"ping"}`)).ID
		if got := id.Integer(); got != want {
			t.Errorf("%s: Integer %v, want %v", raw, got, want)
		}
		if one := (ID{Raw: []byte(`1`), Type: IDNumber}); want && raw != `-3.00` && id.Key() != one.Key() {
			t.Errorf("%s: key %q, not 1's", raw, id.Key())
		}
	}
}
