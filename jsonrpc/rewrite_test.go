package jsonrpc

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestRewrite(t *testing.T) {
	tests := []struct {
		name   string
		frame  string
		target Target
		newRaw string
		want   string
	}{
		{"request id number", `{"jsonrpc":"2.0","id":7,"method":"ping"}`, TargetID, `1007`,
			`{"jsonrpc":"2.0","id":1007,"method":"ping"}`},
		{"request id string keeps spacing", `{ "id" : "a" , "method":"ping","jsonrpc":"2.0"}`, TargetID, `"live-1"`,
			`{ "id" : "live-1" , "method":"ping","jsonrpc":"2.0"}`},
		{"response id", `{"jsonrpc":"2.0","id":"r-7","result":{"id":7}}`, TargetID, `"r-8"`,
			`{"jsonrpc":"2.0","id":"r-8","result":{"id":7}}`},
		{"error null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`, TargetID, `3`,
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32700,"message":"x"}}`},
		{"duplicate id rewrites the last", `{"id":1,"jsonrpc":"2.0","id":2,"method":"ping"}`, TargetID, `9`,
			`{"id":1,"jsonrpc":"2.0","id":9,"method":"ping"}`},
		{"request token", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":"t1"},"progressToken":5}}`,
			TargetProgressToken, `"t2"`,
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":"t2"},"progressToken":5}}`},
		{"progress notification token", `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":0,"progress":1}}`,
			TargetProgressToken, `-12`,
			`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":-12,"progress":1}}`},
		{"cancel target", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12,"reason":"x"}}`,
			TargetCancelTarget, `"\u0031"`,
			`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"\u0031","reason":"x"}}`},
		{"object id replaced", `{"jsonrpc":"2.0","id":{"a":[1]},"result":{}}`, TargetID, `1.5e3`,
			`{"jsonrpc":"2.0","id":1.5e3,"result":{}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			frame := []byte(tc.frame)
			orig := bytes.Clone(frame)
			got, err := AppendRewrite(nil, frame, tc.target, []byte(tc.newRaw))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
			if !bytes.Equal(frame, orig) {
				t.Fatal("the original frame was modified")
			}
			info := Classify(got)
			var id ID
			switch tc.target {
			case TargetID:
				id = info.ID
			case TargetProgressToken:
				id = info.ProgressToken
			case TargetCancelTarget:
				id = info.CancelTarget
			}
			if string(id.Raw) != tc.newRaw {
				t.Fatalf("reclassified %s = %q, want %q", tc.target, id.Raw, tc.newRaw)
			}
		})
	}
}

func TestRewriteNamedFunctions(t *testing.T) {
	req := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":1}}}`)
	if got, err := RewriteID(req, []byte(`2`)); err != nil || string(got) != strings.Replace(string(req), `"id":1`, `"id":2`, 1) {
		t.Errorf("RewriteID = %s, %v", got, err)
	}
	if got, err := RewriteProgressToken(req, []byte(`"p"`)); err != nil || !bytes.Contains(got, []byte(`{"progressToken":"p"}`)) {
		t.Errorf("RewriteProgressToken = %s, %v", got, err)
	}
	cancel := []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`)
	if got, err := RewriteCancelTarget(cancel, []byte(`77`)); err != nil || !bytes.Contains(got, []byte(`"requestId":77}`)) {
		t.Errorf("RewriteCancelTarget = %s, %v", got, err)
	}
}

func TestRewriteErrors(t *testing.T) {
	req := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	tests := []struct {
		name   string
		frame  string
		target Target
		newRaw string
		want   string // in the error text
		is     error
	}{
		{"new value object", req, TargetID, `{"a":1}`, "not a JSON string or number", nil},
		{"new value null", req, TargetID, `null`, "not a JSON string or number", nil},
		{"new value bool", req, TargetID, `true`, "not a JSON string or number", nil},
		{"new value empty", req, TargetID, ``, "empty", nil},
		{"new value with space", req, TargetID, ` 1`, "not a JSON string or number", nil},
		{"new value trailing space", req, TargetID, `1 `, "data after the value", nil},
		{"new value two values", req, TargetID, `"a""b"`, "data after the value", nil},
		{"new value leading zero", req, TargetID, `01`, "data after the value", nil},
		{"new value unterminated", req, TargetID, `"abc`, "unterminated string", nil},
		{"new value bad escape", req, TargetID, `"a\qb"`, "invalid escape", nil},
		{"new value raw newline", req, TargetID, "\"a\nb\"", "control character", nil},
		{"new value bad UTF-8", req, TargetID, "\"a\xffb\"", "not valid UTF-8", nil},
		{"frame invalid", `{"id":1,`, TargetID, `2`, "invalid JSON at byte", nil},
		{"frame batch", `[{"id":1}]`, TargetID, `2`, "batch of 1, split it first", nil},
		{"no id", `{"jsonrpc":"2.0","method":"ping"}`, TargetID, `2`, "in notification frame", ErrNoTarget},
		{"no token", req, TargetProgressToken, `2`, "progress token", ErrNoTarget},
		{"token of other notification", `{"jsonrpc":"2.0","method":"x","params":{"progressToken":1}}`, TargetProgressToken, `2`, "", ErrNoTarget},
		{"no cancel target", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}`, TargetCancelTarget, `2`, "cancel target", ErrNoTarget},
		{"cancel target of a request", `{"jsonrpc":"2.0","id":1,"method":"notifications/cancelled","params":{"requestId":1}}`, TargetCancelTarget, `2`, "", ErrNoTarget},
		{"unknown target", req, Target(0), `2`, "unknown target", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := []byte("keep")
			got, err := AppendRewrite(dst, []byte(tc.frame), tc.target, []byte(tc.newRaw))
			if err == nil {
				t.Fatalf("no error; got %s", got)
			}
			if string(got) != "keep" {
				t.Errorf("dst changed on error: %q", got)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "jsonrpc: rewrite") || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
				t.Errorf("error %q, want one line with %q", msg, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v is not %v", err, tc.is)
			}
		})
	}
}

func TestReplace(t *testing.T) {
	frame := []byte(`{"id":12345}`)
	if got := Replace([]byte("x:"), frame, 6, 11, []byte(`"a"`)); string(got) != `x:{"id":"a"}` {
		t.Errorf("Replace = %s", got)
	}
	if got := Replace(nil, frame, 0, len(frame), nil); len(got) != 0 {
		t.Errorf("Replace all = %q", got)
	}
	if got := Replace(nil, frame, 3, 3, []byte("!")); string(got) != `{"i!d":12345}` {
		t.Errorf("Replace insert = %s", got)
	}
	buf := make([]byte, 0, 64)
	if n := testing.AllocsPerRun(50, func() { buf = Replace(buf[:0], frame, 6, 11, []byte("9")) }); n != 0 {
		t.Errorf("Replace into a big enough buffer allocated %v times", n)
	}
	defer func() {
		if recover() == nil {
			t.Error("Replace with end beyond the frame did not panic")
		}
	}()
	Replace(nil, frame, 2, 99, nil)
}

func TestAppendRewriteNoAlloc(t *testing.T) {
	frame := requestFrame()
	buf := make([]byte, 0, 2*len(frame))
	n := testing.AllocsPerRun(100, func() {
		var err error
		if buf, err = AppendRewrite(buf[:0], frame, TargetID, []byte(`123456`)); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Errorf("AppendRewrite allocated %v times per run, want 0", n)
	}
}
