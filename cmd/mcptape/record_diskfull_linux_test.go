//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

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
	checkRecoveredTape(t, tp, 20)
}

// TestRecordStdioFullDisk: a stdio recording whose tape's disk fills up
// (a real 1 MiB tmpfs, root only) goes on forwarding, says so on stderr,
// and once room is made goes on recording after a gap marker, as the HTTP
// proxy does: the tape reads back whole. (It used to stop recording at the
// first write error for good, a partial frame left at the tape's end.)
func TestRecordStdioFullDisk(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v)", err)
	}
	defer syscall.Unmount(dir, syscall.MNT_DETACH)
	t.Setenv(recordHelperEnv, "1") // an echo server
	tp := filepath.Join(dir, "full.jsonl.zst")
	in, client := io.Pipe()
	stderr := &lockedBuffer{}
	var echoed countingWriter
	done := make(chan int, 1)
	args := slices.Concat([]string{"record", "-o", tp, "--flush", "10ms", "--level", "1", "--"}, helperArgv())
	go func() { done <- run(context.Background(), &stdio{in: in, out: &echoed, err: stderr}, args) }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) { // the header first
		if fi, err := os.Stat(tp); err == nil && fi.Size() > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no tape header written:\n%s", stderr)
		}
	}
	filler := filepath.Join(dir, "filler")
	if err := os.WriteFile(filler, bytes.Repeat([]byte{'f'}, 1<<20), 0o600); err != nil && !errors.Is(err, syscall.ENOSPC) {
		t.Fatal(err)
	}
	send := func(n int, tag string) {
		for i := range n {
			// Distinct, poorly compressible lines, so that the tape needs room.
			line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"tag":"%s","r":"%x%x"}}`+"\n",
				i, tag, time.Now().UnixNano()*int64(i+7919), time.Now().UnixNano()*int64(i+104729))
			wrote := make(chan error, 1)
			go func() { _, err := io.WriteString(client, line); wrote <- err }()
			select {
			case code := <-done:
				t.Fatalf("%s %d: record ended (exit %d) before its stdin did:\n%s", tag, i, code, stderr)
			case err := <-wrote:
				if err != nil {
					t.Fatalf("%s %d: %v", tag, i, err)
				}
			}
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stderr.String(), "recording failed") && time.Now().Before(deadline) {
		send(50, "full")
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(stderr.String(), "recording failed") {
		t.Fatalf("nothing said about the full disk:\n%s", stderr)
	}
	os.Remove(filler)
	send(20, "after")
	time.Sleep(100 * time.Millisecond) // a few flushes: the gap marker and the records after it
	client.Close()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	if !strings.Contains(stderr.String(), "works again") {
		t.Errorf("no recovery said:\n%s", stderr)
	}
	checkRecoveredTape(t, tp, 40) // each line and its echo
}

// countingWriter counts the bytes written to it, from any goroutine.
type countingWriter struct{ n atomic.Int64 }

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n.Add(int64(len(p)))
	return len(p), nil
}

// TestRecordWebSocketFullDisk: the WebSocket proxy's tape recovers from a
// full disk (a real 1 MiB tmpfs, root only) as the HTTP proxy's does: the
// messages sent once room is made are in a tape that reads back whole,
// after a gap marker. (It used to stop recording at the first write error,
// a partial frame left at the tape's end.)
func TestRecordWebSocketFullDisk(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v)", err)
	}
	defer syscall.Unmount(dir, syscall.MNT_DETACH)
	tp := filepath.Join(dir, "ws.jsonl.zst")
	rec, url := startWSRecord(t, serveWS(t), tp)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{"mcp"}})
	if err != nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	defer c.CloseNow()
	send := func(n int, tag string) {
		for i := range n {
			frame := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"_meta":{"tag":"%s","r":"%x%x"}}}`,
				i, tag, time.Now().UnixNano()*int64(i+7919), time.Now().UnixNano()*int64(i+104729))
			if err := c.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
				t.Fatalf("%s %d: %v", tag, i, err)
			}
			if _, _, err := c.Read(ctx); err != nil { // its answer: forwarding goes on
				t.Fatalf("%s %d: no answer: %v", tag, i, err)
			}
		}
	}
	send(1, "before")
	time.Sleep(300 * time.Millisecond) // flushed: the tape has whole frames first
	filler := filepath.Join(dir, "filler")
	if err := os.WriteFile(filler, bytes.Repeat([]byte{'f'}, 1<<20), 0o600); err != nil && !errors.Is(err, syscall.ENOSPC) {
		t.Fatal(err)
	}
	send(200, "full")
	time.Sleep(300 * time.Millisecond) // a few flushes fail
	os.Remove(filler)
	send(20, "after")
	c.Close(websocket.StatusNormalClosure, "")
	stopWSRecord(t, rec)
	checkRecoveredTape(t, tp, 20)
}

// checkRecoveredTape checks the tape at tp of a recording that lost
// records to a full disk: it reads back whole (no damaged tail), holds
// want messages tagged "after" (sent once room was made), and inspect
// reports the gap.
func checkRecoveredTape(t *testing.T, tp string, want int) {
	t.Helper()
	_, recs := readTapeFile(t, tp)
	after := 0
	for _, r := range recs {
		if r.Type == tape.TypeMessage && bytes.Contains(r.Frame, []byte(`"tag":"after"`)) {
			after++
		}
	}
	if after != want {
		t.Errorf("%d messages recorded after the outage, want %d", after, want)
	}
	code, out, errs := runCLI(t, "", "inspect", tp)
	if code != 0 || !strings.Contains(out, "tape gap:") {
		t.Errorf("inspect does not report the gap: %d %s\n%s", code, errs, out)
	}
}
