package clientconfig

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestWrapFile: a change keeps the old file as a backup and the file's
// permissions; a run that changes nothing writes nothing; an error leaves
// the file alone.
func TestWrapFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mcp.json")
	orig := []byte(`{"mcpServers": {"a": {"command": "x"}, "r": {"url": "http://h/mcp"}}}`)
	if err := os.WriteFile(path, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	c, _ := FindClient("cursor")
	o := Options{Mcptape: testMcptape, Servers: []string{"a"}}
	ch, err := c.WrapFile(path, o)
	if err != nil {
		t.Fatal(err)
	}
	if ch.Backup != path+BackupSuffix || len(ch.Outcomes) != 1 || ch.Outcomes[0].Action != Wrapped {
		t.Fatalf("change %+v", ch)
	}
	if b, _ := os.ReadFile(ch.Backup); string(b) != string(orig) {
		t.Errorf("backup %q", b)
	}
	wrapped, _ := os.ReadFile(path)
	if st, _ := os.Stat(path); runtime.GOOS != "windows" && st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	os.Remove(ch.Backup)
	if ch, err := c.WrapFile(path, o); err != nil || ch.Backup != "" {
		t.Errorf("second wrap: %+v, %v; want no change", ch, err)
	}
	if _, err := os.Stat(path + BackupSuffix); err == nil {
		t.Error("a run that changed nothing wrote a backup")
	}
	if _, err := c.WrapFile(path, Options{Mcptape: testMcptape, Servers: []string{"r"}}); err == nil {
		t.Error("HTTP server wrapped")
	}
	if b, _ := os.ReadFile(path); string(b) != string(wrapped) {
		t.Error("a failed wrap changed the file")
	}
	if _, err := c.UnwrapFile(path, Options{All: true}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != string(orig) {
		t.Errorf("unwrapped %q, want %q", b, orig)
	}
	if _, err := c.WrapFile(filepath.Join(dir, "none.json"), o); err == nil {
		t.Error("missing file wrapped")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 { // mcp.json and its backup: no temporary file left
		t.Errorf("directory holds %d files", len(entries))
	}
}
