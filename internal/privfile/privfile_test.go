package privfile

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestCreate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("permission bits are a read-only flag on Windows")
	}
	dir := t.TempDir()
	tests := []struct {
		name string
		old  os.FileMode // 0: the file does not exist
	}{
		{name: "new file"},
		{name: "existing 0644", old: 0o644},
		{name: "existing 0666", old: 0o666},
		{name: "existing 0600", old: 0o600},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.name)
			if tt.old != 0 {
				if err := os.WriteFile(path, []byte("old content"), tt.old); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(path, tt.old); err != nil { // past the umask
					t.Fatal(err)
				}
			}
			f, err := Create(path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteString("new"); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != Mode {
				t.Errorf("mode %v, want %v", fi.Mode().Perm(), Mode)
			}
			if b, _ := os.ReadFile(path); string(b) != "new" {
				t.Errorf("content %q, want %q (truncated)", b, "new")
			}
		})
	}
	if _, err := Create(filepath.Join(dir, "no-such-dir", "f")); err == nil {
		t.Error("Create in a missing directory succeeded")
	}
}
