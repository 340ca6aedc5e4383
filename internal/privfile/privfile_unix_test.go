//go:build unix

package privfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
)

// TestCreateNotRegular: Create opens a path that is not a regular file
// (here a named pipe; /dev/null alike) without changing its mode.
func TestCreateNotRegular(t *testing.T) {
	path := peertest.Fifo(t)
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("data\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want the pipe's own 0644", fi.Mode().Perm())
	}
}

// TestRemove: Remove deletes a regular file, and leaves alone what is
// not one (a device such as /dev/full that failed a write, a pipe).
func TestRemove(t *testing.T) {
	reg := filepath.Join(t.TempDir(), "out")
	if err := os.WriteFile(reg, []byte("part"), 0o600); err != nil {
		t.Fatal(err)
	}
	pipe := peertest.Fifo(t)
	tests := []struct {
		name, path string
		kept       bool
	}{
		{name: "regular file", path: reg, kept: false},
		{name: "named pipe", path: pipe, kept: true},
		{name: "missing", path: filepath.Join(t.TempDir(), "none"), kept: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			Remove(tt.path)
			_, err := os.Lstat(tt.path)
			if kept := err == nil; kept != tt.kept {
				t.Errorf("kept %v, want %v (%v)", kept, tt.kept, err)
			}
		})
	}
}
