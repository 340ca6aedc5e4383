package jsonrpc

import (
	"errors"
	"strings"
	"testing"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		name  string
		frame string
		want  []string
	}{
		{"two messages", `[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]`,
			[]string{`{"jsonrpc":"2.0","id":1,"method":"a"}`, `{"jsonrpc":"2.0","method":"b"}`}},
		{"whitespace trimmed", " [\r\n  {\"id\":1} ,\n\t{\"id\" : 2}\n]\r\n",
			[]string{`{"id":1}`, `{"id" : 2}`}},
		{"nested arrays and strings with brackets", `[[1,[2]],"a]b,c",{"x":"]"}]`,
			[]string{`[1,[2]]`, `"a]b,c"`, `{"x":"]"}`}},
		{"empty", `[]`, nil},
		{"empty with space", ` [ ] `, nil},
		{"one", `[{"jsonrpc":"2.0","id":"x","result":{}}]`, []string{`{"jsonrpc":"2.0","id":"x","result":{}}`}},
		{"scalars", `[1,-2.5e3,true,null]`, []string{`1`, `-2.5e3`, `true`, `null`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Split([]byte(tc.frame))
			if err != nil {
				t.Fatalf("Split: %v", err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d members %q, want %d", len(got), got, len(tc.want))
			}
			for i := range got {
				if string(got[i]) != tc.want[i] {
					t.Errorf("member %d = %q, want %q", i, got[i], tc.want[i])
				}
				if cap(got[i]) != len(got[i]) {
					t.Errorf("member %d has spare capacity %d: appending would overwrite the frame", i, cap(got[i]))
				}
			}
		})
	}
}

func TestSplitErrors(t *testing.T) {
	tests := []struct {
		name     string
		frame    string
		notBatch bool
		offset   int
		msg      string
	}{
		{"object", `{"jsonrpc":"2.0","method":"a"}`, true, 0, ""},
		{"string", `  "x"`, true, 2, ""},
		{"empty", ``, false, 0, "empty frame"},
		{"trailing comma", `[1,2,]`, false, 5, "want a value"},
		{"missing comma", `[{"a":1} {"b":2}]`, false, 9, "expected ',' or ']'"},
		{"unterminated", `[{"a":1},{"b":`, false, 14, "end of input"},
		{"bad member", `[{"a":1},{"b":x}]`, false, 14, "want a value"},
		{"after array", `[1] 2`, false, 4, "data after"},
		{"invalid object", `{"a":}`, false, 5, "want a value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dst := make([][]byte, 1, 8)
			dst[0] = []byte("keep")
			got, err := AppendSplit(dst, []byte(tc.frame))
			if err == nil {
				t.Fatalf("no error, members %q", got)
			}
			if len(got) != 1 || string(got[0]) != "keep" {
				t.Errorf("dst changed on error: %q", got)
			}
			if !strings.HasPrefix(err.Error(), "jsonrpc: split: ") || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q is not one line with the package prefix", err)
			}
			if tc.notBatch {
				if !errors.Is(err, ErrNotBatch) {
					t.Errorf("error %v, want ErrNotBatch", err)
				}
				return
			}
			var se *SyntaxError
			if !errors.As(err, &se) || se.Offset != tc.offset || !strings.Contains(se.Msg, tc.msg) {
				t.Errorf("error %v, want a SyntaxError at %d containing %q", err, tc.offset, tc.msg)
			}
		})
	}
}

func TestAppendSplitNoAlloc(t *testing.T) {
	frame := []byte(`[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"prompts/list"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`)
	dst := make([][]byte, 0, 8)
	n := testing.AllocsPerRun(100, func() {
		var err error
		if dst, err = AppendSplit(dst[:0], frame); err != nil || len(dst) != 3 {
			t.Fatalf("AppendSplit = %d, %v", len(dst), err)
		}
	})
	if n != 0 {
		t.Errorf("AppendSplit allocated %v times per run, want 0", n)
	}
	// Each member classifies on its own.
	for i, want := range []Kind{KindRequest, KindRequest, KindNotification} {
		if got := Classify(dst[i]).Kind; got != want {
			t.Errorf("member %d: %v, want %v", i, got, want)
		}
	}
}
