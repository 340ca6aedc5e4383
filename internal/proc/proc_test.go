package proc

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv switches TestHelperProcess into a child of the tests below:
// "eof" says "ready" and exits 0 at the end of stdin; "stubborn" ignores SIGTERM and the
// end of stdin; "exit N" exits with N; "group" starts a grandchild that
// ignores SIGTERM, prints its pid, then exits at the end of stdin.
const helperEnv = "PROC_TEST_HELPER"

func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(helperEnv)
	if mode == "" {
		t.Skip("helper process for the proc tests")
	}
	switch {
	case mode == "eof":
		fmt.Println("ready")
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	case mode == "stubborn":
		ignoreTerm()
		fmt.Println("ready")
		io.Copy(io.Discard, os.Stdin)
		time.Sleep(time.Hour)
	case strings.HasPrefix(mode, "exit "):
		var code int
		fmt.Sscan(mode[5:], &code)
		os.Exit(code)
	case mode == "group":
		g := helper("stubborn")
		out, _ := g.StdoutPipe()
		g.Start()
		bufio.NewReader(out).ReadString('\n')
		fmt.Println(g.Process.Pid)
		io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	os.Exit(3)
}

// helper returns the command that runs TestHelperProcess in mode.
func helper(mode string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	// GORACE: a race-enabled child would sleep a second at exit.
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, "GORACE=atexit_sleep_ms=0")
	return cmd
}

// start starts the helper in mode under Start, with a pipe to its stdin
// and a reader of its stdout.
func start(t *testing.T, mode string) (*Child, io.WriteCloser, *bufio.Reader) {
	t.Helper()
	cmd := helper(mode)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c, err := Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Signal(syscall.SIGKILL); <-c.Done() })
	return c, stdin, bufio.NewReader(stdout)
}

// TestStop: each step of the policy is taken only when the one before did
// not stop the child, and the status says how it ended.
func TestStop(t *testing.T) {
	const grace = time.Second
	tests := []struct {
		mode     string
		minTime  time.Duration
		wantCode int
		wantSig  string
	}{
		{"eof", 0, 0, ""}, // stdin's end is enough
		{"stubborn", 2 * grace, 128 + 9, "SIGKILL"}, // two graces, then SIGKILL
		{"exit 7", 0, 7, ""},                        // exited by itself before Stop
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			c, stdin, stdout := start(t, tt.mode)
			if tt.mode != "exit 7" {
				if line, err := stdout.ReadString('\n'); line != "ready\n" {
					t.Fatalf("helper said %q, %v", line, err)
				}
			}
			begin := time.Now()
			if err := c.Stop(stdin, grace); err != nil {
				t.Fatal(err)
			}
			if d := time.Since(begin); d < tt.minTime {
				t.Errorf("Stop took %v, want at least %v", d, tt.minTime)
			}
			if got := c.Status(); got != (Status{Code: tt.wantCode, Signal: tt.wantSig}) {
				t.Errorf("Status = %+v, want code %d signal %q", got, tt.wantCode, tt.wantSig)
			}
		})
	}
}

// TestStopWithoutStdin: with no stdin to close, SIGTERM comes at once.
func TestStopWithoutStdin(t *testing.T) {
	c, _, _ := start(t, "eof") // its stdin stays open: only a signal stops it
	begin := time.Now()
	if err := c.Stop(nil, time.Minute); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(begin); d > 30*time.Second {
		t.Errorf("Stop took %v: it waited before SIGTERM", d)
	}
	if got := c.Status(); got != (Status{Code: 128 + 15, Signal: "SIGTERM"}) {
		t.Errorf("Status = %+v, want 143 SIGTERM", got)
	}
}

// TestStopContext: once its context ends, StopContext cuts the graces
// and kills a child that ignores stdin's end and SIGTERM at once, whether
// the context ended before the stop or during a wait (a second Ctrl-C);
// with graces of a minute, only the cut ends it within the test's time.
func TestStopContext(t *testing.T) {
	for _, during := range []bool{false, true} {
		t.Run(fmt.Sprintf("during=%v", during), func(t *testing.T) {
			c, stdin, stdout := start(t, "stubborn")
			if line, err := stdout.ReadString('\n'); line != "ready\n" {
				t.Fatalf("helper said %q, %v", line, err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if during {
				// Most likely while the stop waits for stdin's end (were it
				// earlier, the case is the other one: no wrong verdict).
				time.AfterFunc(10*time.Millisecond, cancel)
			} else {
				cancel()
			}
			done := make(chan error, 1)
			go func() { done <- c.StopContext(ctx, stdin, time.Minute) }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("StopContext still waiting 20 s after its context ended")
			}
			if got := c.Status(); got != (Status{Code: 128 + 9, Signal: "SIGKILL"}) {
				t.Errorf("Status = %+v, want SIGKILL", got)
			}
		})
	}
}

// TestStatusBeforeExit: a running child has no status yet.
func TestStatusBeforeExit(t *testing.T) {
	c, _, _ := start(t, "eof")
	if got := c.Status(); got.Code != -1 {
		t.Errorf("Status of a running child = %+v, want code -1", got)
	}
	if err := c.Err(); err != nil {
		t.Errorf("Err of a running child = %v", err)
	}
}

// TestSignalName covers the common names and the fallback.
func TestSignalName(t *testing.T) {
	tests := []struct {
		sig  syscall.Signal
		want string
	}{
		{syscall.SIGTERM, "SIGTERM"}, {syscall.SIGKILL, "SIGKILL"}, {syscall.SIGINT, "SIGINT"},
		{syscall.Signal(77), "signal 77"},
	}
	for _, tt := range tests {
		if got := SignalName(tt.sig); got != tt.want {
			t.Errorf("SignalName(%d) = %q, want %q", int(tt.sig), got, tt.want)
		}
	}
}

// TestStartFails: a missing program is Start's error, as exec's.
func TestStartFails(t *testing.T) {
	_, err := Start(exec.Command("/no/such/program"))
	if err == nil {
		t.Fatal("started a missing program")
	}
}
