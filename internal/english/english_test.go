package english

import "testing"

func TestCount(t *testing.T) {
	tests := []struct {
		n    int64
		noun string
		want string
	}{
		{0, "session", "0 sessions"},
		{1, "session", "1 session"},
		{2, "session", "2 sessions"},
		{1, "error response", "1 error response"},
		{3, "error response", "3 error responses"},
		{2, "batch", "2 batches"},
		{1, "batch", "1 batch"},
		{2, "status", "2 statuses"},
		{2, "box", "2 boxes"},
		{2, "flush", "2 flushes"},
		{2, "entry", "2 entries"},
		{2, "key", "2 keys"},
		{2, "byte", "2 bytes"},
		{-1, "session", "-1 sessions"},
		{1 << 40, "record", "1099511627776 records"},
	}
	for _, tt := range tests {
		if got := Count(tt.n, tt.noun); got != tt.want {
			t.Errorf("Count(%d, %q) = %q, want %q", tt.n, tt.noun, got, tt.want)
		}
	}
}

// TestCountTypes: every integer type counts alike.
func TestCountTypes(t *testing.T) {
	for _, got := range []string{Count(1, "tape"), Count(int64(1), "tape"), Count(uint64(1), "tape"), Count(int32(1), "tape")} {
		if got != "1 tape" {
			t.Errorf("got %q, want 1 tape", got)
		}
	}
	if got := Count(uint64(2), "tape"); got != "2 tapes" {
		t.Errorf("got %q", got)
	}
}

func TestNoun(t *testing.T) {
	tests := []struct {
		n          int
		noun, want string
	}{
		{1, "recorded request", "recorded request"},
		{4, "recorded request", "recorded requests"},
		{0, "", ""},
	}
	for _, tt := range tests {
		if got := Noun(tt.n, tt.noun); got != tt.want {
			t.Errorf("Noun(%d, %q) = %q, want %q", tt.n, tt.noun, got, tt.want)
		}
	}
}
