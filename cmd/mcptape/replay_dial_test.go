package main

import (
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
)

// TestReplayDialTimeout: replay's --timeout bounds the dial of a WebSocket
// or legacy SSE server that takes the request and never answers it (the
// replay waited for ever): the replay fails soon, saying it was
// connecting.
func TestReplayDialTimeout(t *testing.T) {
	tp := recordServeTape(t, 1)
	addr := peertest.Mute(t)
	tests := []struct {
		name string
		args []string
	}{
		{"websocket", []string{"--url", "ws://" + addr + "/ws"}},
		{"legacy sse", []string{"--url", "http://" + addr + "/sse", "--sse"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			code, _, stderr := runCLI(t, "", append([]string{"replay", tp, "--timeout", "300ms"}, tt.args...)...)
			if took := time.Since(start); took > 10*time.Second {
				t.Fatalf("replay took %v with --timeout 300ms", took)
			}
			if code != 2 || !strings.Contains(stderr, "connecting") || !strings.Contains(stderr, "deadline exceeded") {
				t.Errorf("exit %d, stderr %q; want 2 and a dial that timed out", code, stderr)
			}
		})
	}
}
