package transport

import (
	"net"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/http1"
)

// deadlineConn counts the deadlines set on it.
type deadlineConn struct {
	net.Conn
	set []time.Time
}

func (c *deadlineConn) SetDeadline(t time.Time) error {
	c.set = append(c.set, t)
	return nil
}

// TestSetDeadlineSlack: a connection's I/O deadline moves only when an
// exchange's deadline is not covered by the one set (never earlier, at
// most slack later), so that one request after another with the same
// timeout moves the runtime's timers once per slack, not per request.
func TestSetDeadlineSlack(t *testing.T) {
	base := time.Unix(1000, 0)
	ms := time.Millisecond
	type step struct {
		t     time.Time
		slack time.Duration
	}
	tests := []struct {
		name  string
		steps []step
		want  []time.Time // the deadlines set, in order
	}{
		{"first deadline", []step{{base, 10 * ms}}, []time.Time{base.Add(10 * ms)}},
		{"later within slack", []step{{base, 10 * ms}, {base.Add(4 * ms), 10 * ms}, {base.Add(10 * ms), 10 * ms}},
			[]time.Time{base.Add(10 * ms)}},
		{"later past slack", []step{{base, 10 * ms}, {base.Add(11 * ms), 10 * ms}}, []time.Time{base.Add(10 * ms), base.Add(21 * ms)}},
		{"earlier", []step{{base, 10 * ms}, {base.Add(-time.Second), 10 * ms}},
			[]time.Time{base.Add(10 * ms), base.Add(-time.Second + 10*ms)}},
		{"more slack than the one set", []step{{base, 10 * ms}, {base.Add(-ms), 0}}, []time.Time{base.Add(10 * ms), base.Add(-ms)}},
		{"none, then none", []step{{base, 0}, {time.Time{}, 0}, {time.Time{}, 0}}, []time.Time{base, {}}},
		{"none, then one", []step{{time.Time{}, 0}, {base, 0}}, []time.Time{base}},
		{"no slack", []step{{base, 0}, {base, 0}, {base.Add(1), 0}}, []time.Time{base, base.Add(1)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nc := &deadlineConn{}
			c := &leanConn{Conn: http1.NewConn(nc, nil)}
			for _, s := range tt.steps {
				c.setDeadline(s.t, s.slack)
				if !s.t.IsZero() && c.dl.Before(s.t) {
					t.Fatalf("deadline %v set for an exchange until %v: earlier", c.dl, s.t)
				}
				if s.t.IsZero() != c.dl.IsZero() {
					t.Fatalf("deadline %v set for an exchange with deadline %v", c.dl, s.t)
				}
			}
			if len(nc.set) != len(tt.want) {
				t.Fatalf("deadlines set %v, want %v", nc.set, tt.want)
			}
			for i := range tt.want {
				if !nc.set[i].Equal(tt.want[i]) {
					t.Errorf("deadline %d: %v, want %v", i, nc.set[i], tt.want[i])
				}
			}
		})
	}
}

// TestDeadlineSlack: 1/64 of the exchange's time, at most
// maxDeadlineSlack, never negative.
func TestDeadlineSlack(t *testing.T) {
	sent := time.Unix(1000, 0)
	tests := []struct {
		after time.Duration
		want  time.Duration
	}{
		{640 * time.Millisecond, 10 * time.Millisecond},
		{30 * time.Second, maxDeadlineSlack},
		{0, 0},
		{-time.Second, 0},
	}
	for _, tt := range tests {
		if got := deadlineSlack(sent, sent.Add(tt.after)); got != tt.want {
			t.Errorf("deadlineSlack for %v: %v, want %v", tt.after, got, tt.want)
		}
	}
}
