package peertest

import (
	"os"
	"path/filepath"
	"testing"
)

// Cat writes the files at paths one after the other into a new file of
// the test's temporary directory, as `cat a b > c` does, and returns its
// path: tapes joined so (zstd frames concatenate) for the tests of the
// readers that keep such tapes apart.
func Cat(t testing.TB, paths ...string) string {
	t.Helper()
	var all []byte
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, data...)
	}
	out := filepath.Join(t.TempDir(), "cat.jsonl.zst")
	if err := os.WriteFile(out, all, 0o600); err != nil {
		t.Fatal(err)
	}
	return out
}
