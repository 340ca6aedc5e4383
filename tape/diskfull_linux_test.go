//go:build linux

package tape

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestRotatorFullDisk fills a real 1 MiB tmpfs (root only: skipped
// otherwise) under a Rotator: writes never fail, the loss is reported and
// counted, and once room is made the tape goes on with a gap marker and
// reads back to its end.
func TestRotatorFullDisk(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v): TestRecoveryGap covers recovery with a fault-injecting file", err)
	}
	defer syscall.Unmount(dir, syscall.MNT_DETACH)
	var mu sync.Mutex
	var warnings []string
	r, err := NewRotator(RotateConfig{Base: filepath.Join(dir, "t.jsonl.zst"), Header: testHeader(),
		Options: []Option{WithFlushInterval(10 * time.Millisecond), WithLevel(1)},
		Warnf: func(f string, a ...any) {
			mu.Lock()
			warnings = append(warnings, f)
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	filler := filepath.Join(dir, "filler")
	if err := os.WriteFile(filler, bytes.Repeat([]byte{'x'}, 1<<20), 0o600); err != nil && !errors.Is(err, syscall.ENOSPC) {
		t.Fatal(err)
	}
	// Incompressible-ish frames so that the tape needs room.
	frame := func(i int) []byte {
		return []byte(`{"jsonrpc":"2.0","method":"m","params":{"i":` + strings.Repeat("1", 1+i%7) + `}}`)
	}
	for i := range 2000 {
		if err := r.Write(msg(int64(i), ClientToServer, string(frame(i)))); err != nil {
			t.Fatalf("write %d on a full disk: %v", i, err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for r.Stats().Lost == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if r.Stats().Lost == 0 {
		t.Fatal("nothing lost on a full disk")
	}
	os.Remove(filler)
	for range 50 {
		if err := r.Write(msg(int64(5000), ClientToServer, `{"jsonrpc":"2.0","method":"after"}`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Close(); err != nil {
		t.Fatalf("close after room was made: %v", err)
	}
	st := r.Stats()
	if st.Gaps != 1 {
		t.Fatalf("stats %+v, want one gap", st)
	}
	tr, err := Open(st.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	seen := map[string]int{}
	countMessages(t, tr, seen)
	if seen[`{"jsonrpc":"2.0","method":"after"}`] != 50 {
		t.Errorf("records after the outage: %d, want 50", seen[`{"jsonrpc":"2.0","method":"after"}`])
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warnings) != 2 || !strings.Contains(warnings[0], "recording failed") || !strings.Contains(warnings[1], "works again") {
		t.Errorf("warnings %q, want a failure and a recovery", warnings)
	}
}
