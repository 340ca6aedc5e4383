package mock

import (
	"context"
	"math"
	"testing"
	"time"
)

// TestClockSaturates: a recorded delay that, scaled by a low speed, is
// past the largest time.Duration is waited for until the context ends
// (it wrapped round to no wait at all), a huge fault delay too; a moment
// long past, with or without a delay, is kept at once or after the delay.
func TestClockSaturates(t *testing.T) {
	tests := []struct {
		name  string
		at    int64
		extra time.Duration
		kept  bool // reached before the context ended
	}{
		{"huge recorded delay", 1e16, 0, false},
		{"largest recorded delay", math.MaxInt64, 0, false},
		{"huge delay plus fault delay", 1e16, math.MaxInt64, false},
		{"long past", math.MinInt64, 0, true},
		{"long past plus fault delay", math.MinInt64, time.Millisecond, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			if got := newClock(1e-3, 0).wait(ctx, tt.at, tt.extra, nil); got != tt.kept {
				t.Errorf("wait = %v, want %v", got, tt.kept)
			}
		})
	}
}
