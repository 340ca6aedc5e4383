package peertest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// helperEnv selects what the test binary does when re-executed as a
// helper process by helperArgv.
const helperEnv = "PEERTEST_HELPER"

// TestHelperProcess is not a test: it is the body of the processes that
// the tests below start (the test binary itself, re-executed).
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("helper process for the other tests")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Exit(helperMain(mode, args))
}

func helperMain(mode string, args []string) int {
	switch mode {
	case "http": // listen on args[0] after a short delay, like a real server starting
		fmt.Println("starting")
		time.Sleep(150 * time.Millisecond)
		ln, err := net.Listen("tcp", args[0])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println("listening")
		for {
			c, err := ln.Accept()
			if err != nil {
				return 1
			}
			c.Close()
		}
	case "exit": // fail at start with a message
		fmt.Fprintln(os.Stderr, "boom: config missing")
		return 3
	case "inuse":
		fmt.Fprintln(os.Stderr, "listen tcp 127.0.0.1:1: bind: address already in use")
		return 1
	case "never": // never listens
		time.Sleep(time.Minute)
		return 0
	case "echo": // stdio: echo lines until stdin ends
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			fmt.Println("echo " + sc.Text())
		}
		fmt.Fprintln(os.Stderr, "stdin closed")
		return 0
	case "stubborn": // ignore SIGTERM and stdin EOF
		signal.Ignore(syscall.SIGTERM)
		fmt.Println("ready")
		time.Sleep(time.Minute)
		return 0
	case "tree": // start a grandchild, print its pid, then wait
		// A plain child, as node or npm would start one: same process
		// group, no death signal.
		child := exec.Command(os.Args[0], helperArgv()[1:]...)
		child.Env = append(os.Environ(), helperEnv+"=never")
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println(child.Process.Pid)
		time.Sleep(time.Minute)
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
	return 2
}

// helperArgv is the command line that re-executes the test binary as a
// helper; the mode goes in the environment.
func helperArgv(args ...string) []string {
	return append([]string{os.Args[0], "-test.run=^TestHelperProcess$", "--"}, args...)
}

func helperEnvFor(mode string) []string { return []string{helperEnv + "=" + mode} }

// fakeTB records what a TB wrapper does instead of failing the real test.
type fakeTB struct {
	testing.TB
	mu       sync.Mutex
	fatal    string
	logs     []string
	cleanups []func()
}

func (f *fakeTB) Helper() {}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.mu.Lock()
	f.fatal = fmt.Sprintf(format, args...)
	f.mu.Unlock()
	runtime.Goexit()
}
func (f *fakeTB) Logf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Failed() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fatal != ""
}

// run calls fn as a test body would (Fatalf ends it), then the cleanups.
func (f *fakeTB) run(fn func(testing.TB)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
	}
}

func TestStartHTTP(t *testing.T) {
	tests := []struct {
		name       string
		mode       string
		timeout    time.Duration
		wantFatal  []string // substrings of the failure; none means success
		wantInUse  bool
		wantOutput string
	}{
		{name: "ready", mode: "http", timeout: 10 * time.Second, wantOutput: "listening"},
		{name: "exits", mode: "exit", timeout: 10 * time.Second, wantFatal: []string{"exited before listening", "boom: config missing", "exit status 3"}},
		{name: "port taken", mode: "inuse", timeout: 10 * time.Second, wantFatal: []string{"already in use"}, wantInUse: true},
		{name: "never listens", mode: "never", timeout: 300 * time.Millisecond, wantFatal: []string{"did not listen", "deadline exceeded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			addr := "127.0.0.1:" + strconv.Itoa(FreePort(t))
			ctx, cancel := context.WithTimeout(context.Background(), tt.timeout)
			defer cancel()
			argv := helperArgv(addr)

			// The error-returning core.
			p, err := startHTTP(ctx, argv, helperEnvFor(tt.mode), "http://"+addr+"/mcp")
			if len(tt.wantFatal) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if p.URL != "http://"+addr+"/mcp" {
					t.Errorf("URL = %q", p.URL)
				}
				waitOutput(t, p, tt.wantOutput)
				p.Stop()
				if !p.exited() {
					t.Fatal("Stop returned before the process exited")
				}
				p.Stop() // idempotent
				return
			}
			if err == nil {
				p.Stop()
				t.Fatal("startHTTP succeeded, want an error")
			}
			for _, w := range tt.wantFatal {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if got := errors.Is(err, errAddrInUse); got != tt.wantInUse {
				t.Errorf("errors.Is(err, errAddrInUse) = %v, want %v", got, tt.wantInUse)
			}

			// The testing.TB wrapper fails the test with the same message.
			f := &fakeTB{TB: t}
			ctx2, cancel2 := context.WithTimeout(context.Background(), tt.timeout)
			defer cancel2()
			f.run(func(tb testing.TB) { StartHTTP(tb, ctx2, argv, helperEnvFor(tt.mode), addr) })
			if !strings.Contains(f.fatal, tt.wantFatal[0]) {
				t.Errorf("StartHTTP fatal = %q, want %q", f.fatal, tt.wantFatal[0])
			}
		})
	}
}

// waitOutput waits until p's output holds want.
func waitOutput(t *testing.T, p *Process, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(p.Output(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("output %q never contained %q", p.Output(), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestStartHTTPCleanupLogsOutputOnFailure(t *testing.T) {
	addr := "127.0.0.1:" + strconv.Itoa(FreePort(t))
	f := &fakeTB{TB: t}
	var p *Process
	f.run(func(tb testing.TB) {
		p = StartHTTP(tb, context.Background(), helperArgv(addr), helperEnvFor("http"), "http://"+addr)
		tb.Fatalf("the test itself fails")
	})
	if p == nil || !p.exited() {
		t.Fatal("cleanup did not stop the server")
	}
	if len(f.logs) != 1 || !strings.Contains(f.logs[0], "listening") || !strings.Contains(f.logs[0], "pid") {
		t.Fatalf("logs after failure = %q, want the server's output", f.logs)
	}
}

func TestStartStdio(t *testing.T) {
	f := &fakeTB{TB: t}
	var p *Process
	f.run(func(tb testing.TB) {
		p = StartStdio(tb, context.Background(), helperArgv(), helperEnvFor("echo"))
		for _, line := range []string{"one", strings.Repeat("x", 200_000)} {
			if _, err := fmt.Fprintln(p.Stdin, line); err != nil {
				t.Errorf("%v\n%s", err, p.Output())
				return
			}
			got, err := p.Stdout.ReadString('\n')
			if err != nil || got != "echo "+line+"\n" {
				t.Errorf("read %d bytes, %v; want the echo of a %d-byte line", len(got), err, len(line))
			}
		}
	})
	if f.fatal != "" {
		t.Fatal(f.fatal)
	}
	// Cleanup closed stdin: the helper exits by itself, cleanly.
	if err := p.Wait(context.Background()); err != nil {
		t.Fatalf("exit after stdin closed: %v\n%s", err, p.Output())
	}
	if !strings.Contains(p.Output(), "stdin closed") {
		t.Fatalf("stderr = %q, want the helper's goodbye", p.Output())
	}
}

func TestStopKillsStubbornProcess(t *testing.T) {
	t.Parallel()
	p, err := startProcess(context.Background(), helperArgv(), helperEnvFor("stubborn"), true)
	if err != nil {
		t.Fatal(err)
	}
	if line, err := p.Stdout.ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("helper said %q, %v", line, err)
	}
	start := time.Now()
	p.Stop()
	if !p.exited() {
		t.Fatal("still running after Stop")
	}
	var exit *exec.ExitError
	if err := p.child.Err(); !errors.As(err, &exit) || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("exit = %v, want killed", err)
	}
	if d := time.Since(start); d < 2*stopGrace-100*time.Millisecond {
		t.Fatalf("Stop took %v: did not give the process its grace periods", d)
	}
}

func TestStopKillsProcessGroup(t *testing.T) {
	t.Parallel()
	p, err := startProcess(context.Background(), helperArgv(), helperEnvFor("tree"), true)
	if err != nil {
		t.Fatal(err)
	}
	line, err := p.Stdout.ReadString('\n')
	if err != nil {
		p.Stop()
		t.Fatalf("no grandchild pid: %v\n%s", err, p.Output())
	}
	grandchild, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || !Alive(grandchild) {
		p.Stop()
		t.Fatalf("grandchild %q not running", line)
	}
	p.Stop()
	deadline := time.Now().Add(5 * time.Second)
	for Alive(grandchild) {
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d survived Stop", grandchild)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestCommandContextKillsGroup(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	cmd := Command(ctx, helperArgv(), helperEnvFor("never"))
	start := time.Now()
	err := cmd.Run()
	if err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("Run = %v after %v; want killed soon after the deadline", err, time.Since(start))
	}
	if err := Command(ctx, nil, nil).Run(); err == nil {
		t.Fatal("empty command ran")
	}
}

func TestReadyAddr(t *testing.T) {
	tests := []struct {
		in, want string
		wantErr  bool
	}{
		{in: "http://127.0.0.1:3101/mcp", want: "127.0.0.1:3101"},
		{in: "http://localhost/sse", want: "localhost:80"},
		{in: "https://[::1]/mcp", want: "[::1]:443"},
		{in: "http://[::1]:9/", want: "[::1]:9"},
		{in: "127.0.0.1:8080", want: "127.0.0.1:8080"},
		{in: "ftp://host/x", wantErr: true},
		{in: "http:///mcp", wantErr: true},
		{in: "127.0.0.1", wantErr: true},
		{in: "", wantErr: true},
		{in: "http://%zz", wantErr: true},
	}
	for _, tt := range tests {
		got, err := readyAddr(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("readyAddr(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func FuzzReadyAddr(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:3101/mcp", "https://[::1]/x", "h:1", "http://:0", "::1", "http://a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		addr, err := readyAddr(s)
		if err != nil {
			return
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			t.Fatalf("readyAddr(%q) = %q, not host:port: %v", s, addr, err)
		}
	})
}

func TestTailBuffer(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		writes []string
	}{
		{"under", 10, []string{"abc", "def"}},
		{"exact", 6, []string{"abc", "def"}},
		{"over by little", 4, []string{"abc", "def", "g"}},
		{"one huge write", 4, []string{"ab", "0123456789"}},
		{"many small", 3, strings.Split("abcdefghijklmnopqrstuvwxyz", "")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newTailBuffer(tt.max)
			for _, w := range tt.writes {
				if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if got, want := b.String(), tailModel(strings.Join(tt.writes, ""), tt.max); got != want {
				t.Fatalf("String = %q, want %q", got, want)
			}
		})
	}
}

// tailModel is what a tailBuffer of max bytes must show after all of s.
func tailModel(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return "[" + strconv.Itoa(len(s)-max) + " earlier bytes dropped]\n" + s[len(s)-max:]
}

func FuzzTailBuffer(f *testing.F) {
	f.Add(uint8(4), []byte("hello, world"), uint8(3))
	f.Add(uint8(1), []byte("x"), uint8(1))
	f.Fuzz(func(t *testing.T, max uint8, data []byte, chunk uint8) {
		if max == 0 || chunk == 0 {
			return
		}
		b := newTailBuffer(int(max))
		for rest := data; len(rest) > 0; {
			n := min(int(chunk), len(rest))
			b.Write(rest[:n])
			rest = rest[n:]
		}
		if got, want := b.String(), tailModel(string(data), int(max)); got != want {
			t.Fatalf("String = %q, want %q", got, want)
		}
	})
}
