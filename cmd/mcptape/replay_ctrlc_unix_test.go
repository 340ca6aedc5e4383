//go:build unix

package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/refserver"
)

// TestReplayCtrlCAfterItsServerDied: a Ctrl-C that reaches the proxy (or
// server) in front of replay first, in replay's process group, stops it,
// and replay notices that death before its own SIGINT: replay exits 130
// (interrupted by SIGINT, the report partial), not 2 (a failed replay).
// The order is made certain here: SIGINT to the proxy, then, 20 ms
// later, to the whole group, replay included; replay, at a request the
// proxy then cuts, saw its session fail first and exited 2.
func TestReplayCtrlCAfterItsServerDied(t *testing.T) {
	s, err := refserver.New()
	if err != nil {
		t.Fatal(err)
	}
	ref := refserver.HTTPHandler(s, refserver.HTTPConfig{})
	held := make(chan struct{}, 1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"tools/call"`)) { // held until the proxy cuts it
			select {
			case held <- struct{}{}:
			default:
			}
			<-r.Context().Done()
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		ref.ServeHTTP(w, r)
	}))
	t.Cleanup(up.Close)

	proxy := newMcptape(t, "record", "--upstream", up.URL+refserver.Path, "--listen", "127.0.0.1:0", "-o", t.TempDir()+"/t.jsonl.zst", "--grace", "1ms")
	proxy.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	proxy.start(t)
	m := proxyingRE.FindStringSubmatch(proxy.line(t))
	if m == nil {
		t.Fatal("record's first stderr line does not say where it listens")
	}
	pgid := proxy.cmd.Process.Pid
	rp := newMcptape(t, "replay", basicTape, "--url", m[1], "--speed", "max")
	rp.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pgid: pgid} // one process group, as a shell's pipeline or script
	rp.start(t)
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the replay's tools/call never reached the server")
	}
	if err := syscall.Kill(pgid, syscall.SIGINT); err != nil { // the proxy first...
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	// ...then the group's Ctrl-C reaches replay (ESRCH: replay already
	// exited, its code is checked below)
	if err := syscall.Kill(-pgid, syscall.SIGINT); err != nil && err != syscall.ESRCH {
		t.Fatal(err)
	}
	var stderr strings.Builder
	for l := range rp.lines {
		stderr.WriteString(l + "\n")
	}
	if code := rp.wait(t); code != 130 || !strings.Contains(stderr.String(), "interrupted by SIGINT") {
		t.Errorf("replay exit code %d, want 130 (interrupted by SIGINT); stderr:\n%s", code, stderr.String())
	}
}
