package replay

import (
	"bytes"
	"context"
	"math"
	"testing"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
	"github.com/mcptape/mcptape/transport"
)

func TestScaleGap(t *testing.T) {
	tests := []struct {
		ns    int64
		speed float64
		want  time.Duration
	}{
		{1000, 1, 1000},
		{1000, 2, 500},
		{1000, 0.5, 2000},
		{0, MinSpeed, 0},
		{int64(time.Hour), MinSpeed, 1000 * time.Hour},
		{math.MaxInt64, MinSpeed, math.MaxInt64},
		{1e16, MinSpeed, math.MaxInt64}, // 1e19 ns: past the largest Duration
		{math.MaxInt64, 1, math.MaxInt64},
		{math.MinInt64, MinSpeed, math.MinInt64},
		{math.MaxInt64, MaxSpeed, 9223372036},
	}
	for _, tt := range tests {
		if got := ScaleGap(tt.ns, tt.speed); got != tt.want {
			t.Errorf("ScaleGap(%d, %v) = %d, want %d", tt.ns, tt.speed, got, tt.want)
		}
	}
}

func TestParseSpeed(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"max", 0, true},
		{"1", 1, true},
		{"0.001", MinSpeed, true},
		{"1e9", MaxSpeed, true},
		{"0", 0, false},
		{"-1", 0, false},
		{"1e-300", 0, false},
		{"0.0009", 0, false},
		{"1.1e9", 0, false},
		{"NaN", 0, false},
		{"Inf", 0, false},
		{"fast", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseSpeed(tt.in)
		if got != tt.want || (err == nil) != tt.ok {
			t.Errorf("ParseSpeed(%q) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
		if err := CheckOptions(WithSpeed(tt.want)); (err == nil) != (tt.ok && tt.want != 0) {
			t.Errorf("WithSpeed(%v): %v", tt.want, err)
		}
	}
}

// TestReplayHugeGapWaits: a recorded gap that, scaled by a low speed,
// is past the largest time.Duration is waited for (until the context
// ends), not wrapped round to no wait at all (the next message went at
// once).
func TestReplayHugeGapWaits(t *testing.T) {
	var buf bytes.Buffer
	w := newTapeBuffer(t, &buf)
	for _, r := range []struct {
		at    int64
		dir   tape.Direction
		frame string
	}{
		{1000, tape.ClientToServer, `{"jsonrpc":"2.0","id":1,"method":"ping"}`},
		{2000, tape.ServerToClient, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{1e16, tape.ClientToServer, `{"jsonrpc":"2.0","id":2,"method":"ping"}`}, // 116 days later
		{1e16 + 1000, tape.ServerToClient, `{"jsonrpc":"2.0","id":2,"result":{}}`},
	} {
		w.Write(&tape.Record{Type: tape.TypeMessage, Time: r.at, Session: "s", Dir: r.dir, Frame: []byte(r.frame)})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	sessions := loadBytes(t, buf.Bytes())
	conn := newFakeConn(mcpServer(func(_ []byte, _ *jsonrpc.Info, id string) []string {
		return []string{`{"jsonrpc":"2.0","id":` + id + `,"result":{}}`}
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	Run(ctx, sessions, func(context.Context, *Session) (transport.Conn, error) { return conn, nil }, WithSpeed(MinSpeed))
	conn.mu.Lock()
	defer conn.mu.Unlock()
	if len(conn.sent) != 1 {
		t.Errorf("sent %q: want the first ping only, the second 116 days × 1000 later", conn.sent)
	}
}
