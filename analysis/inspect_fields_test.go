package analysis

import (
	"strings"
	"testing"

	"github.com/mcptape/mcptape/jsonrpc"
)

// TestKeyIndex: every key is found at its place, and nothing else is,
// including names that share a key's length or prefix.
func TestKeyIndex(t *testing.T) {
	for _, keys := range [][]string{paramKeys, resultKeys, {"a", "b", "ab"}} {
		x := newKeyIndex(keys)
		for k, key := range keys {
			if got := x.find([]byte(key)); got != k {
				t.Errorf("%q in %v: %d, want %d", key, keys, got, k)
			}
		}
		for _, name := range []string{"", "nam", "names", "Name", "tasK", "status2", "resultTypes", "protocolVersion_", "0123456789abcdefghij", "c"} {
			if got := x.find([]byte(name)); got != -1 {
				t.Errorf("%q in %v: %d, want -1", name, keys, got)
			}
		}
	}
	for _, bad := range [][]string{{"0123456789abcdef"}, {"aa", "bb", "cc"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("newKeyIndex(%q) did not refuse it", bad)
				}
			}()
			newKeyIndex(bad)
		}()
	}
}

// TestFillReadsTheID: the id a fieldSet holds is the one the Pairer
// would read from the frame, and its fields are those of this frame.
func TestFillReadsTheID(t *testing.T) {
	for _, tc := range []struct {
		frame string
		num   int64
		isInt bool
	}{
		{`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"x"}}`, 42, true},
		{`{"jsonrpc":"2.0","id":-0,"method":"ping"}`, 0, true},
		{`{"jsonrpc":"2.0","id":"42","method":"ping"}`, 0, false},
		{`{"jsonrpc":"2.0","id":1.0,"method":"ping"}`, 0, false},
		{`{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}`, 0, false},
		{`{"jsonrpc":"2.0","id":7,"result":{"isError":true}}`, 7, true},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 0, false},
	} {
		var info jsonrpc.Info
		members := jsonrpc.ClassifyMembers([]byte(tc.frame), &info, nil)
		var fs fieldSet
		fs.idNum, fs.idInt, fs.at[0] = 99, true, span{1, 2} // fill overwrites what it uses
		fs.fill([]byte(tc.frame), &info, members)
		if fs.idInt != tc.isInt || fs.idNum != tc.num {
			t.Errorf("%s: id %d, %v; want %d, %v", tc.frame, fs.idNum, fs.idInt, tc.num, tc.isInt)
		}
		_, num, isNum := NewPairer[int]().key(info.ID)
		if fs.idInt && (!isNum || num != fs.idNum) {
			t.Errorf("%s: the Pairer keys the id as %d, %v", tc.frame, num, isNum)
		}
		wantName := ""
		if strings.Contains(tc.frame, `"name":"x"`) {
			wantName = `"x"`
		}
		if got := string(fs.at[pName].of([]byte(tc.frame))); got != wantName {
			t.Errorf("%s: name field %q, want %q", tc.frame, got, wantName)
		}
	}
}
