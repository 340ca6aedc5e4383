package loadgen

import "testing"

// TestExitStatus: a server's exit reads "status N", a death by signal
// "signal NAME", whatever the system (transport.StdioConn.ExitStatus maps
// both the same everywhere).
func TestExitStatus(t *testing.T) {
	tests := []struct {
		code   int
		signal string
		want   string
	}{
		{0, "", "status 0"},
		{3, "", "status 3"},
		{137, "SIGKILL", "signal SIGKILL"},
		{-1, "", "status -1"},
	}
	for _, tt := range tests {
		if got := exitStatus(tt.code, tt.signal); got != tt.want {
			t.Errorf("exitStatus(%d, %q) = %q, want %q", tt.code, tt.signal, got, tt.want)
		}
	}
}
