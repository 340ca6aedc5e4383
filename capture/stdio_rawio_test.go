//go:build unix && !mcptape_portable

package capture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcptape/mcptape/tape"
)

// blockingPipe returns a pipe whose ends are blocking, as an inherited
// stdin or stdout is (os.Pipe's ends are non-blocking).
func blockingPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	var fds [2]int
	syscall.ForkLock.RLock() // no child may inherit the ends before they are close-on-exec
	err := syscall.Pipe(fds[:])
	if err == nil {
		syscall.CloseOnExec(fds[0])
		syscall.CloseOnExec(fds[1])
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	r, w = os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
	t.Cleanup(func() { r.Close(); w.Close() })
	return r, w
}

func nonblocking(t *testing.T, f *os.File) bool {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var flags int
	rc.Control(func(fd uintptr) { flags, _, _ = syscallFcntl(fd) })
	return flags&syscall.O_NONBLOCK != 0
}

func syscallFcntl(fd uintptr) (int, uintptr, syscall.Errno) {
	r, _, e := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETFL, 0)
	return int(r), 0, e
}

func TestReopenPipe(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("pipes are opened again through /proc on Linux only")
	}
	type setup func(t *testing.T) (f, peer *os.File, flag int)
	tests := []struct {
		name  string
		setup setup
		want  bool // a new description of the same pipe
	}{
		{"read end", func(t *testing.T) (*os.File, *os.File, int) { r, w := blockingPipe(t); return r, w, os.O_RDONLY }, true},
		{"write end", func(t *testing.T) (*os.File, *os.File, int) { r, w := blockingPipe(t); return w, r, os.O_WRONLY }, true},
		{"write end without reader", func(t *testing.T) (*os.File, *os.File, int) {
			r, w := blockingPipe(t) // writes fail with EPIPE, as through w
			r.Close()
			return w, nil, os.O_WRONLY
		}, true},
		{"regular file", func(t *testing.T) (*os.File, *os.File, int) {
			f, err := os.Create(filepath.Join(t.TempDir(), "f"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Close() })
			return f, nil, os.O_WRONLY
		}, false},
		{"socket", func(t *testing.T) (*os.File, *os.File, int) {
			fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
			if err != nil {
				t.Fatal(err)
			}
			a, b := os.NewFile(uintptr(fds[0]), "a"), os.NewFile(uintptr(fds[1]), "b")
			t.Cleanup(func() { a.Close(); b.Close() })
			return a, b, os.O_RDONLY
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, peer, flag := tt.setup(t)
			g := reopenPipe(f, flag)
			if (g != nil) != tt.want {
				t.Fatalf("reopenPipe = %v, want a file: %v", g, tt.want)
			}
			if g == nil {
				return
			}
			defer g.Close()
			if nonblocking(t, f) {
				t.Fatal("the original description became non-blocking")
			}
			if !nonblocking(t, g) {
				t.Fatal("the new description is blocking")
			}
			if peer == nil {
				return
			}
			// The new description is an end of the same pipe.
			src, dst := peer, g
			if flag == os.O_RDONLY {
				src, dst = g, peer
			}
			if _, err := dst.Write([]byte("ping\n")); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 16)
			n, err := src.Read(buf)
			if err != nil || string(buf[:n]) != "ping\n" {
				t.Fatalf("read %q, %v through the pipe; want \"ping\\n\"", buf[:n], err)
			}
		})
	}
}

func TestRawReader(t *testing.T) {
	tests := []struct {
		name    string
		do      func(w *os.File, r *os.File) // acts on the pipe around the read
		want    string
		wantErr error
	}{
		{"data", func(w, _ *os.File) { w.Write([]byte("abc")) }, "abc", nil},
		{"data later", func(w, _ *os.File) {
			time.AfterFunc(20*time.Millisecond, func() { w.Write([]byte("late")) })
		}, "late", nil},
		{"end of file", func(w, _ *os.File) { w.Close() }, "", io.EOF},
		{"deadline", func(_, r *os.File) { r.SetReadDeadline(time.Now().Add(20 * time.Millisecond)) }, "", os.ErrDeadlineExceeded},
		{"closed while waiting", func(_, r *os.File) { time.AfterFunc(20*time.Millisecond, func() { r.Close() }) }, "", os.ErrClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rr, r, w := rawPipe(t)
			tt.do(w, r)
			buf := make([]byte, 64)
			n, err := rr.Read(buf)
			if string(buf[:n]) != tt.want || !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("Read = %q, %v; want %q, %v", buf[:n], err, tt.want, tt.wantErr)
			}
		})
	}
}

// TestRunStdioClientPipes runs the proxy with pipes on the client's side,
// as "mcptape record" is run by an MCP client: both are opened again and
// driven by the pumps' raw I/O.
func TestRunStdioClientPipes(t *testing.T) {
	big := strings.Repeat("x", 300<<10) // more than a pipe holds
	tests := []struct {
		name string
		c2s  string
	}{
		{"adversarial", adversarial},
		{"large lines", big + "\n" + `{"jsonrpc":"2.0","method":"m"}` + "\n" + big},
		{"empty", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			argv, env := peerCmd(t, "echo")
			inR, inW := blockingPipe(t)
			outR, outW := blockingPipe(t)
			got := make(chan []byte, 1)
			go func() { b, _ := io.ReadAll(outR); got <- b }()
			go func() { inW.Write([]byte(tt.c2s)); inW.Close() }()
			mem := &memTape{}
			res, err := RunStdio(context.Background(), StdioOptions{Command: argv, Env: env,
				Stdin: inR, Stdout: outW, CloseStdout: true, Tape: mem})
			if err != nil {
				t.Fatal(err)
			}
			var echoed []byte
			select {
			case echoed = <-got: // CloseStdout closed both descriptions of the pipe
			case <-time.After(10 * time.Second):
				t.Fatal("the client did not see the end of stdout")
			}
			checkSame(t, "client received", echoed, []byte(tt.c2s))
			checkSame(t, "c2s recorded", frames(mem.records(), tape.ClientToServer), []byte(tt.c2s))
			checkSame(t, "s2c recorded", frames(mem.records(), tape.ServerToClient), []byte(tt.c2s))
			if res.ClientMessages != res.ServerMessages {
				t.Fatalf("recorded %d client and %d server messages, want as many", res.ClientMessages, res.ServerMessages)
			}
		})
	}
}

// TestRunStdioStdinLeftOpen checks that the pump reading a client's stdin
// pipe that stays open ends when RunStdio returns (the server exited by
// itself), instead of staying blocked in a Read.
func TestRunStdioStdinLeftOpen(t *testing.T) {
	argv, env := peerCmd(t, "early", "PEER_S2C="+writeTemp(t, "s2c", []byte("{\"jsonrpc\":\"2.0\",\"method\":\"bye\"}\n")))
	inR, _ := blockingPipe(t) // the write end stays open
	before := runtime.NumGoroutine()
	res, err := RunStdio(context.Background(), StdioOptions{Command: argv, Env: env, Stdin: inR, Stdout: io.Discard, Tape: &memTape{}})
	if err != nil || res.Reason != ReasonServerExit {
		t.Fatalf("RunStdio = %+v, %v; want the server's exit", res, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines left running, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRunStdioClientStopsReading: the client closes its end of stdout; the
// proxy warns once and goes on recording.
func TestRunStdioClientStopsReading(t *testing.T) {
	var s2c bytes.Buffer
	for range 2000 {
		s2c.WriteString(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + strings.Repeat("y", 100) + `"}}` + "\n")
	}
	argv, env := peerCmd(t, "early", "PEER_S2C="+writeTemp(t, "s2c", s2c.Bytes()))
	outR, outW := blockingPipe(t)
	outR.Close()
	var mu sync.Mutex
	var warnings []string
	mem := &memTape{}
	res, err := RunStdio(context.Background(), StdioOptions{Command: argv, Env: env, Stdin: strings.NewReader(""),
		Stdout: outW, Tape: mem, Warnf: func(f string, a ...any) {
			mu.Lock()
			defer mu.Unlock()
			warnings = append(warnings, f)
		}})
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, "s2c recorded", frames(mem.records(), tape.ServerToClient), s2c.Bytes())
	if res.ServerMessages != 2000 {
		t.Fatalf("recorded %d server messages, want 2000", res.ServerMessages)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(warnings) != 1 || !strings.Contains(warnings[0], "client stopped reading") {
		t.Fatalf("warnings %q, want one about the client", warnings)
	}
}

// TestRunStdioOrderingParksOnClientPipe: as in
// TestRunStdioOrderingYieldsToBlockedForwarding, the client writes
// everything before it reads anything, but its stdout is a pipe: the s2c
// pump, blocked forwarding into it, records what it wrote and parks (see
// pump.forwardRaw), so the c2s pump's waits end exactly and none has to
// give way.
func TestRunStdioOrderingParksOnClientPipe(t *testing.T) {
	var s2c, c2s bytes.Buffer
	for i := range 4000 {
		fmt.Fprintf(&s2c, `{"jsonrpc":"2.0","method":"notifications/message","params":{"n":%d}}`+"\n", i)
		fmt.Fprintf(&c2s, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"n":%d,"pad":"%0250d"}}`+"\n", i, 0)
	}
	argv, env := peerCmd(t, "script", "PEER_S2C="+writeTemp(t, "s2c", s2c.Bytes()))
	inR, inW := blockingPipe(t)
	outR, outW := blockingPipe(t)
	got := make(chan []byte, 1)
	go func() {
		inW.Write(c2s.Bytes())
		inW.Close()
		b, _ := io.ReadAll(outR)
		got <- b
	}()
	var mu sync.Mutex
	var logs []string
	debugf := func(f string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		logs = append(logs, fmt.Sprintf(f, a...))
	}
	mem := &memTape{}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := RunStdio(ctx, StdioOptions{Command: argv, Env: env, Stdin: inR, Stdout: outW, CloseStdout: true, Tape: mem, Debugf: debugf})
	if err != nil {
		t.Fatal(err)
	}
	checkSame(t, "client got", <-got, s2c.Bytes())
	checkSame(t, "recorded s2c", frames(mem.records(), tape.ServerToClient), s2c.Bytes())
	checkSame(t, "recorded c2s", frames(mem.records(), tape.ClientToServer), c2s.Bytes())
	if res.ClientMessages != 4000 || res.ServerMessages != 4000 {
		t.Fatalf("recorded %d/%d messages, want 4000 each way", res.ClientMessages, res.ServerMessages)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, l := range logs {
		if strings.Contains(l, "without waiting") {
			t.Fatalf("a wait for the other direction gave way: %s", l)
		}
	}
}

// TestRawIOAllocs: reading and forwarding a chunk allocate nothing.
func TestRawIOAllocs(t *testing.T) {
	rr, _, w := rawPipe(t)
	p := newPump(newRecorder(&memTape{}, "1", t.Logf), tape.ClientToServer, nil, w, 1<<20)
	p.own, p.other = &progress{}, &progress{}
	var err error
	if p.raw, err = w.SyscallConn(); err != nil {
		t.Fatal(err)
	}
	chunk, buf := []byte("{}\n"), make([]byte, 64)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := p.forwardRaw(chunk); err != nil {
			t.Fatal(err)
		}
		if n, err := rr.Read(buf); n != len(chunk) || err != nil {
			t.Fatalf("Read = %d, %v", n, err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per chunk, want 0", allocs)
	}
}

// rawPipe returns a pipe, closed when the test ends, and a raw reader of
// its read end.
func rawPipe(t *testing.T) (rr *rawReader, r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	if rr, err = newRawReader(r, r.Name()); err != nil {
		t.Fatal(err)
	}
	return rr, r, w
}
