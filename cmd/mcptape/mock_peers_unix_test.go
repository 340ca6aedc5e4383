//go:build unix

package main

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
)

// TestMockRotatedRecordingEverything: the Inspector CLI calls
// server-everything (Streamable HTTP) through `mcptape record --rotate`,
// its two calls landing in different tapes of the rotation; `mcptape mock
// DIR --http` then serves the directory's tapes joined, and the Inspector
// prints against it what it printed against the real server. (mock took
// one tape: the rotated recording could not be served.)
func TestMockRotatedRecordingEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("real peers")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	srv := peertest.EverythingHTTP(t, ctx)
	rec, url, tp := startRecordProxy(t, srv.URL, "--rotate", "300ms", "--flush", "10ms")
	calls := [][]string{
		{"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=first"},
		{"--method", "tools/call", "--tool-name", "echo", "--tool-arg", "message=second"},
	}
	var recorded []string
	for i, c := range calls {
		if i > 0 {
			time.Sleep(time.Second) // a rotation between the calls
		}
		recorded = append(recorded, peertest.Inspector(t, ctx, append([]string{url, "--transport", "http"}, c...)...))
	}
	if err := rec.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := rec.wait(t); code != 0 {
		t.Fatalf("record exited %d", code)
	}
	dir := filepath.Dir(tp)
	tapes, _ := filepath.Glob(filepath.Join(dir, "*.jsonl.zst"))
	if len(tapes) < 2 || !strings.Contains(recorded[0], "first") || !strings.Contains(recorded[1], "second") {
		t.Fatalf("%d tapes, Inspector outputs %q: want a rotation and both echoes", len(tapes), recorded)
	}
	m := startMcptape(t, "mock", dir, "--http", "127.0.0.1:0", "--speed", "max")
	var at string
	for l := m.line(t); at == ""; l = m.line(t) {
		if sm := listeningRE.FindStringSubmatch(l); sm != nil {
			at = sm[1]
			break
		}
	}
	for i, c := range calls {
		if got := peertest.Inspector(t, ctx, append([]string{at, "--transport", "http"}, c...)...); got != recorded[i] {
			t.Errorf("%v: against the mock\n%s\nagainst the real server\n%s", c, got, recorded[i])
		}
	}
	if err := m.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var report strings.Builder
	for l := range m.lines {
		report.WriteString(l + "\n")
	}
	if code := m.wait(t); code != 0 || !strings.Contains(report.String(), " 0 unmatched") || strings.Contains(report.String(), "warning") {
		t.Errorf("mock exited %d, stderr:\n%s", code, report.String())
	}
}
