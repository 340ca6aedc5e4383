//go:build unix

package transport

import (
	"context"
	"testing"
	"time"
)

// TestStdioExitStatus: how the server ended reads as "mcptape record"
// reports it: its exit code, or 128+N and the name of the signal N that
// killed it.
func TestStdioExitStatus(t *testing.T) {
	tests := []struct {
		script   string
		wantCode int
		wantSig  string
	}{
		{"exit 0", 0, ""},
		{"exit 5", 5, ""},
		{"kill -KILL $$", 137, "SIGKILL"},
		{"kill -TERM $$", 143, "SIGTERM"},
	}
	for _, tt := range tests {
		t.Run(tt.script, func(t *testing.T) {
			c, err := DialStdio(context.Background(), []string{"sh", "-c", tt.script})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			select {
			case <-c.Exited():
			case <-time.After(time.Minute):
				t.Fatal("the server did not exit")
			}
			if code, sig := c.ExitStatus(); code != tt.wantCode || sig != tt.wantSig {
				t.Errorf("ExitStatus = %d %q, want %d %q", code, sig, tt.wantCode, tt.wantSig)
			}
		})
	}
}
