package clientconfig

import (
	"path/filepath"
	"testing"
)

// TestDefaultPath: where each client keeps its configuration on each
// system, from the environment.
func TestDefaultPath(t *testing.T) {
	vars := map[string]string{"APPDATA": `C:\Users\me\AppData\Roaming`, "XDG_CONFIG_HOME": "/xdg"}
	env := func(workspace bool) Env {
		return Env{
			Getenv: func(k string) string { return vars[k] },
			Home:   "/home/me",
			Cwd:    "/work",
			Exists: func(p string) bool { return workspace && p == filepath.Join("/work", ".vscode", "mcp.json") },
		}
	}
	j := filepath.Join
	tests := []struct {
		client, goos string
		workspace    bool
		want         string
	}{
		{"claude-desktop", "darwin", false, j("/home/me", "Library", "Application Support", "Claude", "claude_desktop_config.json")},
		{"claude-desktop", "windows", false, j(`C:\Users\me\AppData\Roaming`, "Claude", "claude_desktop_config.json")},
		{"claude-desktop", "linux", false, j("/xdg", "Claude", "claude_desktop_config.json")},
		{"cursor", "darwin", false, j("/home/me", ".cursor", "mcp.json")},
		{"cursor", "windows", false, j("/home/me", ".cursor", "mcp.json")},
		{"vscode", "linux", true, j("/work", ".vscode", "mcp.json")},
		{"vscode", "linux", false, j("/xdg", "Code", "User", "mcp.json")},
		{"vscode", "darwin", false, j("/home/me", "Library", "Application Support", "Code", "User", "mcp.json")},
		{"vscode", "windows", false, j(`C:\Users\me\AppData\Roaming`, "Code", "User", "mcp.json")},
		{"claude-code", "linux", false, j("/home/me", ".claude.json")},
		{"claude-code", "windows", false, j("/home/me", ".claude.json")},
	}
	for _, tt := range tests {
		c, err := FindClient(tt.client)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.DefaultPath(tt.goos, env(tt.workspace))
		if err != nil || got != tt.want {
			t.Errorf("%s on %s: %q, %v; want %q", tt.client, tt.goos, got, err, tt.want)
		}
	}
	delete(vars, "APPDATA")
	c, _ := FindClient("claude-desktop")
	if _, err := c.DefaultPath("windows", env(false)); err == nil {
		t.Error("no error without APPDATA")
	}
	delete(vars, "XDG_CONFIG_HOME")
	if got, _ := c.DefaultPath("linux", env(false)); got != j("/home/me", ".config", "Claude", "claude_desktop_config.json") {
		t.Errorf("without XDG_CONFIG_HOME: %q", got)
	}
	if _, err := FindClient("zed"); err == nil {
		t.Error("unknown client found")
	}
}
