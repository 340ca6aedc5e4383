package peertest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/proc"
)

// DefaultReadyTimeout bounds how long StartHTTP waits for a server's port
// when the context has no earlier deadline.
const DefaultReadyTimeout = 30 * time.Second

// Shutdown timing of Process.Stop (internal/proc's policy) and the
// commands of Command.
const (
	stopGrace  = 2 * time.Second // between the steps of Stop
	waitDelay  = 2 * time.Second // exec.Cmd.WaitDelay: pipes held open by grandchildren
	readyPoll  = 25 * time.Millisecond
	outputKeep = 64 << 10 // bytes of output a Process keeps (the last ones)
)

// errAddrInUse marks a server that could not bind its port.
var errAddrInUse = errors.New("address already in use")

// Command returns a command for argv that runs in its own process group
// (internal/proc's policy: on Linux it also dies with the test binary)
// with env added to the current environment. When ctx ends the whole group
// is killed, and Wait gives up on output pipes that grandchildren keep open
// after a short delay. It is the building block of every start function;
// use it for clients that run to completion (cmd.Output()).
func Command(ctx context.Context, argv []string, env []string) *exec.Cmd {
	name, args := "", []string(nil)
	if len(argv) > 0 {
		name, args = argv[0], argv[1:]
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), env...)
	proc.Prepare(cmd)
	cmd.Cancel = func() error { return proc.Kill(cmd) }
	cmd.WaitDelay = waitDelay
	return cmd
}

// Process is a peer started by StartHTTP or StartStdio (or the Start
// helpers built on them). It runs in its own process group, which Stop
// kills entirely.
type Process struct {
	// Argv is the command line.
	Argv []string
	// URL is the readyURL given to StartHTTP (empty for stdio processes).
	URL string
	// Stdin is the process's standard input (stdio processes only).
	Stdin io.WriteCloser
	// Stdout reads the process's standard output (stdio processes only);
	// lines of any length may be read from it.
	Stdout *bufio.Reader

	cmd      *exec.Cmd
	child    *proc.Child
	out      *tailBuffer
	stdout   *os.File
	stopOnce sync.Once
}

// startProcess starts argv. For stdio processes stdin and stdout are pipes
// and only stderr is captured; otherwise stdout and stderr are captured
// together.
func startProcess(ctx context.Context, argv, env []string, stdio bool) (*Process, error) {
	if len(argv) == 0 {
		return nil, errors.New("start: empty command")
	}
	p := &Process{Argv: append([]string(nil), argv...), out: newTailBuffer(outputKeep)}
	p.cmd = Command(ctx, argv, env)
	p.cmd.Stderr = p.out
	var stdoutW *os.File
	if stdio {
		stdin, err := p.cmd.StdinPipe()
		if err != nil {
			return nil, fmt.Errorf("start %s: %w", argv[0], err)
		}
		r, w, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("start %s: %w", argv[0], err)
		}
		p.Stdin, p.stdout, stdoutW = stdin, r, w
		p.Stdout = bufio.NewReaderSize(r, 64<<10)
		p.cmd.Stdout = w
	} else {
		p.cmd.Stdout = p.out
	}
	child, err := proc.Start(p.cmd)
	if stdoutW != nil {
		stdoutW.Close() // the child has its own copy
	}
	if err != nil {
		if p.stdout != nil {
			p.stdout.Close()
		}
		return nil, fmt.Errorf("start %s: %w", argv[0], err)
	}
	p.child = child
	return p, nil
}

// startHTTP starts argv and waits until readyURL's port accepts connections.
func startHTTP(ctx context.Context, argv, env []string, readyURL string) (*Process, error) {
	addr, err := readyAddr(readyURL)
	if err != nil {
		return nil, err
	}
	p, err := startProcess(ctx, argv, env, false)
	if err != nil {
		return nil, err
	}
	p.URL = readyURL
	if err := p.waitReady(ctx, addr); err != nil {
		p.Stop()
		return nil, err
	}
	return p, nil
}

// waitReady polls addr until it accepts a TCP connection, the process
// exits, or ctx (bounded by DefaultReadyTimeout) ends.
func (p *Process) waitReady(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, DefaultReadyTimeout)
	defer cancel()
	var d net.Dialer
	for {
		dctx, dcancel := context.WithTimeout(ctx, 250*time.Millisecond)
		c, err := d.DialContext(dctx, "tcp", addr)
		dcancel()
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-p.child.Done():
			out := p.out.String()
			err := fmt.Errorf("%s exited before listening on %s: %v", p.Argv[0], addr, p.child.Err())
			if strings.Contains(out, "EADDRINUSE") || strings.Contains(out, "already in use") {
				err = fmt.Errorf("%w (%w)", err, errAddrInUse)
			}
			return fmt.Errorf("%w\n%s", err, out)
		case <-ctx.Done():
			return fmt.Errorf("%s did not listen on %s: %w\n%s", p.Argv[0], addr, context.Cause(ctx), p.out.String())
		case <-time.After(readyPoll):
		}
	}
}

// Pid returns the process id, which is also its process group id.
func (p *Process) Pid() int { return p.child.Pid() }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.child.Done() }

// Wait waits for the process to exit and returns its exit error (nil for
// status 0), or ctx's error if ctx ends first.
func (p *Process) Wait(ctx context.Context) error {
	select {
	case <-p.child.Done():
		return p.child.Err()
	case <-ctx.Done():
		return fmt.Errorf("wait for %s: %w", p.Argv[0], context.Cause(ctx))
	}
}

// Output returns what the process has written so far: stderr, plus stdout
// for HTTP servers. Only the last 64 KiB are kept.
func (p *Process) Output() string { return p.out.String() }

// Stop ends the process and everything else in its process group, by
// internal/proc's policy: for a stdio process it first closes stdin and
// waits a little, then it sends SIGTERM, then SIGKILL; what is left of the
// group is killed. It is safe to call more than once and from several
// goroutines; test cleanup calls it.
func (p *Process) Stop() {
	p.stopOnce.Do(func() {
		if err := p.child.Stop(p.Stdin, stopGrace); err != nil { // a nil Stdin is a nil io.Closer
			p.out.Write([]byte("peertest: " + err.Error() + "\n"))
		}
		if p.stdout != nil {
			p.stdout.Close()
		}
	})
}

func (p *Process) exited() bool {
	select {
	case <-p.child.Done():
		return true
	default:
		return false
	}
}

// readyAddr turns a readiness target into host:port: an http or https URL
// (default ports 80 and 443) or a bare host:port.
func readyAddr(target string) (string, error) {
	if !strings.Contains(target, "://") {
		if _, port, err := net.SplitHostPort(target); err != nil || port == "" {
			return "", fmt.Errorf("ready address %q: want a URL or host:port", target)
		}
		return target, nil
	}
	u, err := url.Parse(target)
	if err != nil {
		return "", fmt.Errorf("ready URL %q: %w", target, err)
	}
	if u.Hostname() == "" {
		return "", fmt.Errorf("ready URL %q: no host", target)
	}
	port := u.Port()
	switch {
	case port != "":
	case u.Scheme == "http":
		port = "80"
	case u.Scheme == "https":
		port = "443"
	default:
		return "", fmt.Errorf("ready URL %q: no port and scheme %q is not http or https", target, u.Scheme)
	}
	return net.JoinHostPort(u.Hostname(), port), nil
}

// freePort asks the kernel for a free TCP port on 127.0.0.1.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// FreePort returns a TCP port that was free on 127.0.0.1 a moment ago.
// Another process may take it before the caller does; the Start helpers
// of this package retry with a new port when that happens.
func FreePort(t testing.TB) int {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatalf("peertest: %v", err)
	}
	return port
}

// StartHTTP starts a server, with env added to the environment, and waits
// until the port of readyURL (a URL or host:port) accepts connections. The
// process group is killed when ctx ends and at test cleanup; its output is
// logged if the test failed. It fails the test, with the server's output,
// if the server exits or does not listen in time.
func StartHTTP(t testing.TB, ctx context.Context, argv []string, env []string, readyURL string) *Process {
	t.Helper()
	p, err := startHTTP(ctx, argv, env, readyURL)
	if err != nil {
		t.Fatalf("peertest: %v", err)
	}
	cleanupProcess(t, p)
	return p
}

// StartStdio starts a stdio peer, with env added to the environment: write
// to p.Stdin, read p.Stdout. The process group is killed when ctx ends and
// at test cleanup (after closing stdin); its stderr is logged if the test
// failed. A ctx derived from t.Context() ends just before cleanup, killing
// the peer outright: call p.Stop yourself to test a graceful exit.
func StartStdio(t testing.TB, ctx context.Context, argv []string, env []string) *Process {
	t.Helper()
	p, err := startProcess(ctx, argv, env, true)
	if err != nil {
		t.Fatalf("peertest: %v", err)
	}
	cleanupProcess(t, p)
	return p
}

// cleanupProcess stops p at test cleanup and shows its output on failure.
func cleanupProcess(t testing.TB, p *Process) {
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("peertest: output of %s (pid %d, %v):\n%s", strings.Join(p.Argv, " "), p.Pid(), p.child.Err(), p.Output())
		}
	})
}

// tailBuffer is a concurrency-safe writer that keeps the last max bytes.
// It lets its buffer grow to twice max before trimming, so a chatty server
// costs one copy per max bytes written, not one per write.
type tailBuffer struct {
	mu      sync.Mutex
	max     int
	buf     []byte
	dropped int64
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

// Write keeps the tail of what was written; it never fails.
func (b *tailBuffer) Write(data []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(data) >= b.max {
		b.dropped += int64(len(b.buf) + len(data) - b.max)
		b.buf = append(b.buf[:0], data[len(data)-b.max:]...)
		return len(data), nil
	}
	b.buf = append(b.buf, data...)
	if over := len(b.buf) - b.max; over > b.max {
		b.dropped += int64(over)
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(data), nil
}

// String returns the last max bytes written, saying how many came before.
func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	kept, dropped := b.buf, b.dropped
	if over := len(kept) - b.max; over > 0 {
		kept, dropped = kept[over:], dropped+int64(over)
	}
	if dropped == 0 {
		return string(kept)
	}
	return "[" + strconv.FormatInt(dropped, 10) + " earlier bytes dropped]\n" + string(kept)
}
