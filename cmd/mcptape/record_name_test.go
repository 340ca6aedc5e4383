package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRecordName: --name puts the tape in the state directory under the
// server's name; with -o, or with a name that is not a plain file name,
// it is a usage error.
func TestRecordName(t *testing.T) {
	state := t.TempDir()
	getenv := func(k string) string { return map[string]string{"XDG_STATE_HOME": state}[k] }
	start := time.Date(2026, 12, 1, 15, 4, 5, 0, time.UTC)
	tests := []struct {
		name, output string
		want         string // the path, or the error
	}{
		{"", "", ""},
		{"everything", "", filepath.Join(state, "mcptape", "tapes", "everything-20261201T150405.000000Z-4242.jsonl.zst")},
		{"everything", "t.jsonl.zst", "-o names it already"},
		{"../up", "", `--name "../up": use letters, digits`},
		{"a b", "", `--name "a b"`},
	}
	for _, tt := range tests {
		f := &recordFlags{name: tt.name, output: tt.output}
		got, err := f.nameTape(getenv, start, 4242)
		switch {
		case err != nil:
			if !strings.Contains(err.Error(), tt.want) || tt.want == "" {
				t.Errorf("%q: error %v, want %q", tt.name, err, tt.want)
			}
		case got != tt.want || (tt.want != "" && f.output != tt.want):
			t.Errorf("%q: path %q (output %q), want %q", tt.name, got, f.output, tt.want)
		}
	}
}
