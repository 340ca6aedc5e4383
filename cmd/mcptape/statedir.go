package main

import (
	"errors"
	"path/filepath"
)

// stateDir returns the directory where mcptape keeps its state (tapes
// recorded without -o) on system goos: $XDG_STATE_HOME when it is an
// absolute path; on Windows %LOCALAPPDATA% (not roaming, and private to
// the user by its ACL); elsewhere ~/.local/state.
func stateDir(goos string, getenv func(string) string) (string, error) {
	if d := getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return d, nil
	}
	if goos == "windows" {
		if d := getenv("LOCALAPPDATA"); d != "" {
			return d, nil
		}
	}
	if home := getenv("HOME"); filepath.IsAbs(home) {
		return filepath.Join(home, ".local", "state"), nil
	}
	return "", errors.New("no -o given and neither XDG_STATE_HOME nor HOME (nor LOCALAPPDATA on Windows) is set to an absolute path: cannot choose where to write the tape")
}
