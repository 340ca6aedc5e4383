package jsonrpc

import "testing"

// TestTopKeyRecognizes: topKey takes each key it knows at once, in the
// compact form only, and leaves everything else to objIter.next (a wrong
// word constant would go unnoticed by the cross-checks, which only see
// the same verdicts either way).
func TestTopKeyRecognizes(t *testing.T) {
	for _, tc := range []struct {
		in  string
		key keyName
		v   int // position of the value; -1 when topKey declines
	}{
		{`,"id":1,"x":0`, keyID, 6},
		{`,"error":{},"x"`, keyError, 9},
		{`,"method":"m","x"`, keyMethod, 10},
		{`,"params":{},"x"`, keyParams, 10},
		{`,"result":{},"x"`, keyResult, 10},
		{`,"id": 1,"x":0`, 0, -1},      // whitespace before the value
		{`, "id":1,"x":0`, 0, -1},      // before the key
		{`,"id" :1,"x":0`, 0, -1},      // before the colon
		{`,"idx":1,"x":0`, 0, -1},      // another key
		{`,"methods":"m"}`, 0, -1},     // another key
		{`,"method";"m","x"`, 0, -1},   // no colon
		{`,"jsonrpc":"2.0"}`, 0, -1},   // not one of its keys
		{`,"id":1`, 0, -1},             // too short to look at
		{`{"id":1,"x":0,"y"`, 0, -1},   // no ','
		{`,"meth\u006fd":"m"}`, 0, -1}, // an escape
	} {
		s := scanner{b: []byte(tc.in)}
		k, v, ok := s.topKey(0)
		if ok != (tc.v >= 0) || ok && (k != tc.key || v != tc.v) {
			t.Errorf("topKey(%q) = %d, %d, %v; want %d, %d", tc.in, k, v, ok, tc.key, tc.v)
		}
	}
}
