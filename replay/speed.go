package replay

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// MinSpeed and MaxSpeed bound WithSpeed. A replay slowed more than a
// thousand times turns a second of the recording into more than a quarter
// of an hour; one sped up more than a billion times waits less than a
// nanosecond for a second of it, which WithMaxSpeed does.
const (
	MinSpeed = 1e-3
	MaxSpeed = 1e9
)

// checkSpeed returns an error unless f is from MinSpeed to MaxSpeed.
func checkSpeed(f float64) error {
	if !(f >= MinSpeed && f <= MaxSpeed) {
		return fmt.Errorf("speed %v is out of range: want a number from %v to %v", f, MinSpeed, MaxSpeed)
	}
	return nil
}

// ParseSpeed parses a --speed value: "max" (returned as 0, for
// WithMaxSpeed) or a number from MinSpeed to MaxSpeed (for WithSpeed).
func ParseSpeed(s string) (float64, error) {
	if s == "max" {
		return 0, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || checkSpeed(f) != nil {
		return 0, fmt.Errorf("%q: want max or a number from %v to %v", s, MinSpeed, MaxSpeed)
	}
	return f, nil
}

// ScaleGap returns the recorded gap of ns nanoseconds divided by speed
// (positive), saturated to the range of time.Duration: a huge gap at a
// low speed waits for ever rather than wrapping round to no wait at all.
func ScaleGap(ns int64, speed float64) time.Duration {
	d := float64(ns) / speed
	switch {
	case d >= math.MaxInt64: // 2^63, one past the largest Duration
		return math.MaxInt64
	case d <= math.MinInt64:
		return math.MinInt64
	}
	return time.Duration(d)
}
