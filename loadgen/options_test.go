package loadgen

import (
	"strings"
	"testing"
)

// TestOptionsBounds: sessions and requests in flight past MaxSessions are
// refused before anything is allocated (--sessions 100000000, a typo, took
// 24 GB in seconds); MaxSessions itself is accepted.
func TestOptionsBounds(t *testing.T) {
	tests := []struct {
		name string
		opts []Option
		want string // in the error; "" for none
	}{
		{name: "most sessions", opts: []Option{WithSessions(MaxSessions)}},
		{name: "too many sessions", opts: []Option{WithSessions(MaxSessions + 1)}, want: "sessions 1000001"},
		{name: "no session", opts: []Option{WithSessions(0)}, want: "sessions 0"},
		{name: "most in flight", opts: []Option{WithInFlight(MaxSessions)}},
		{name: "too many in flight", opts: []Option{WithInFlight(100_000_000)}, want: "in flight 100000000"},
		{name: "product", opts: []Option{WithSessions(1000), WithInFlight(10_000)}, want: "at most 1000000 requests in flight"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newOptions(append(tt.opts, WithRequests(1)))
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("error %v, want one with %q", err, tt.want)
			}
		})
	}
}
