//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcptape/mcptape/tape"
)

// TestRecordHTTPFullDisk records onto a real 1 MiB tmpfs (root only:
// skipped otherwise; tape's TestRecoveryGap covers recovery with a
// fault-injecting file) that is full: every request is still forwarded
// and answered, stderr says recording failed, and once room is made the
// tape goes on with a gap marker that inspect reports.
func TestRecordHTTPFullDisk(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v)", err)
	}
	defer syscall.Unmount(dir, syscall.MNT_DETACH)
	payload := strings.Repeat("x", 2000)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"result":{"pad":"%s"}}`, payload)
	}))
	defer up.Close()
	tp := filepath.Join(dir, "full.jsonl.zst")
	run := startHTTPRecord(t, "--listen", "127.0.0.1:0", "--upstream", up.URL+"/mcp", "-o", tp, "--flush", "10ms", "--level", "1")
	filler := filepath.Join(dir, "filler")
	if err := os.WriteFile(filler, bytes.Repeat([]byte{'f'}, 1<<20), 0o600); err != nil && !errors.Is(err, syscall.ENOSPC) {
		t.Fatal(err)
	}
	send := func(n int, tag string) {
		for i := range n {
			// Distinct, poorly compressible bodies, so that the tape needs room.
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"tag":"%s","i":%d,"r":"%x"}}`, tag, i, time.Now().UnixNano()*int64(i+7919))
			resp, err := http.Post(run.url, "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatalf("%s %d: %v", tag, i, err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !bytes.Contains(got, []byte(payload)) {
				t.Fatalf("%s %d: forwarding broke: %d %.80q", tag, i, resp.StatusCode, got)
			}
		}
	}
	send(300, "full")
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(run.stderr.String(), "recording failed") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(run.stderr.String(), "recording failed") {
		t.Fatalf("nothing said about the full disk:\n%s", run.stderr)
	}
	os.Remove(filler)
	send(20, "after")
	if err := run.stop(); err != nil {
		t.Fatalf("run: %v\n%s", err, run.stderr)
	}
	if !strings.Contains(run.stderr.String(), "works again") {
		t.Errorf("no recovery said:\n%s", run.stderr)
	}
	_, recs := readTapeFile(t, tp) // reads back whole: no damaged tail
	after := 0
	for _, r := range recs {
		if r.Type == tape.TypeMessage && bytes.Contains(r.Frame, []byte(`"tag":"after"`)) {
			after++
		}
	}
	if after != 20 {
		t.Errorf("%d requests recorded after the outage, want 20", after)
	}
	code, out, errs := runCLI(t, "", "inspect", tp)
	if code != 0 || !strings.Contains(out, "tape gap:") {
		t.Errorf("inspect does not report the gap: %d %s\n%s", code, errs, out)
	}
}
