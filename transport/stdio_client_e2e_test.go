//go:build unix

package transport

import (
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
)

// TestStdioE2E talks MCP over stdio with real servers we did not write.
func TestStdioE2E(t *testing.T) {
	tests := []struct {
		name          string
		argv          func(t *testing.T) []string
		version, tool string
		args, want    string
	}{
		{"server-everything", func(t *testing.T) []string { return append(peertest.ServerEverything(t), "stdio") },
			"2025-11-25", "echo", `{"message":"hi from mcptape"}`, "Echo: hi from mcptape"},
		{"go-sdk everything-server", func(t *testing.T) []string { return []string{peertest.GoEverythingServer(t)} },
			"2025-06-18", "test_simple_text", `{}`, "simple text response"},
		{"mcp-go", func(t *testing.T) []string { return []string{peertest.MCPGoServer(t)} },
			"2025-03-26", "echo", `{"message":"hé"}`, "Echo: hé"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := e2eContext(t)
			var stderr syncBuffer
			c, err := DialStdio(ctx, tt.argv(t), WithStderr(&stderr))
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if t.Failed() {
					t.Logf("server stderr:\n%s", stderr.String())
				}
			}()
			defer c.Close()
			handshake(t, ctx, c, tt.version)
			listAndCall(t, ctx, c, tt.tool, tt.args, tt.want)
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-c.Exited():
			default:
				t.Error("Close returned before the server exited")
			}
		})
	}
}
