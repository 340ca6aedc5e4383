package main

import (
	"strings"
	"testing"
)

// TestOpenTapesName: the name of tapes read joined, which inspect's
// report and the errors give, counts the others with its noun agreeing
// ("and 1 more tape", not "and 1 more tapes").
func TestOpenTapesName(t *testing.T) {
	a, b, c := fixture("operations"), fixture("operations-http"), fixture("violations")
	tests := []struct {
		paths []string
		want  string
	}{
		{[]string{a}, a},
		{[]string{a, b}, a + " and 1 more tape"},
		{[]string{a, b, c}, a + " and 2 more tapes"},
	}
	for _, tt := range tests {
		r, name, err := openTapes(&stdio{in: strings.NewReader("")}, tt.paths)
		if err != nil {
			t.Fatalf("%v: %v", tt.paths, err)
		}
		r.Close()
		if name != tt.want {
			t.Errorf("%v: name %q, want %q", tt.paths, name, tt.want)
		}
	}
}
