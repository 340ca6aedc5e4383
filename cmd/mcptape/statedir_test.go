package main

import (
	"path/filepath"
	"testing"
)

// TestStateDir: where tapes recorded without -o go, per system.
func TestStateDir(t *testing.T) {
	const local = `C:\Users\me\AppData\Local`
	tests := []struct {
		goos string
		env  map[string]string
		want string // "" for an error
	}{
		{"linux", map[string]string{"XDG_STATE_HOME": "/xdg", "HOME": "/home/me"}, "/xdg"},
		{"linux", map[string]string{"XDG_STATE_HOME": "rel", "HOME": "/home/me"}, filepath.Join("/home/me", ".local", "state")},
		{"darwin", map[string]string{"HOME": "/Users/me"}, filepath.Join("/Users/me", ".local", "state")},
		{"windows", map[string]string{"LOCALAPPDATA": local, "HOME": "/home/me"}, local},
		{"windows", map[string]string{"XDG_STATE_HOME": "/xdg", "LOCALAPPDATA": local}, "/xdg"},
		{"windows", map[string]string{}, ""},
		{"linux", map[string]string{"LOCALAPPDATA": local}, ""},
	}
	for _, tt := range tests {
		got, err := stateDir(tt.goos, func(k string) string { return tt.env[k] })
		if (err != nil) != (tt.want == "") || got != tt.want {
			t.Errorf("%s %v: %q, %v; want %q", tt.goos, tt.env, got, err, tt.want)
		}
	}
}
