package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcptape/mcptape/internal/proc"
)

// StdioConn is a Conn to an MCP server run as a child process, speaking
// newline-delimited JSON-RPC on its stdin and stdout.
//
// The child is started and stopped by internal/proc: in a process group of
// its own, so that the signals of Close reach the processes it started
// too, and made to die with mcptape (see that package for each system). Its stdout is read by one
// goroutine with LineReader (lines of any size); its stderr goes where
// WithStderr says. See Conn for the concurrency contract.
type StdioConn struct {
	child *proc.Child
	argv0 string
	stdin *os.File // write end of the child's stdin
	out   *os.File // read end of the child's stdout
	grace time.Duration
	now   context.Context // WithStopNow
	max   int

	in  *inbox
	seq atomic.Uint64

	wmu    sync.Mutex // serialises writes
	wbuf   []byte
	broken error // set under wmu: a write failed half-way

	closeOnce sync.Once
	closeErr  error
	closing   atomic.Bool
}

var _ Conn = (*StdioConn)(nil)

// smallLine is the largest frame Send copies to write it with its "\n" in
// one system call; larger frames are written in two.
const smallLine = 64 << 10

// DialStdio starts argv (the program, then its arguments) as a stdio MCP
// server and returns a connection to it. ctx bounds the start only: the
// child lives until Close. Options: WithEnv, WithDir, WithStderr,
// WithGrace, WithMaxFrame.
func DialStdio(ctx context.Context, argv []string, opts ...Option) (*StdioConn, error) {
	o, err := newOptions("DialStdio", forStdio, opts)
	if err != nil {
		return nil, err
	}
	if len(argv) == 0 || argv[0] == "" {
		return nil, errors.New("transport: DialStdio: empty command")
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("transport: DialStdio %s: %w", argv[0], err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	if len(o.env) > 0 {
		cmd.Env = append(os.Environ(), o.env...)
	}
	cmd.Dir = o.dir
	cmd.Stderr = o.stderr
	cmd.WaitDelay = o.grace // stderr copying held up by grandchildren

	// Own pipes rather than StdinPipe/StdoutPipe: Wait closes those, which
	// would lose output still unread when the child exits, and the write
	// end must support deadlines for Send's ctx.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("transport: DialStdio %s: stdin pipe: %w", argv[0], err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("transport: DialStdio %s: stdout pipe: %w", argv[0], err)
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	child, err := proc.Start(cmd)
	if err != nil {
		for _, f := range []*os.File{inR, inW, outR, outW} {
			f.Close()
		}
		return nil, fmt.Errorf("transport: DialStdio: %w", err)
	}
	inR.Close() // the child's ends
	outW.Close()

	c := &StdioConn{
		child: child, argv0: argv[0], stdin: inW, out: outR,
		grace: o.grace, now: o.stopNow, max: o.maxFrame,
		in: newInbox(streamQueueLimit),
	}
	go c.read()
	return c, nil
}

// Pid returns the child's process id.
func (c *StdioConn) Pid() int { return c.child.Pid() }

// Exited returns a channel closed once the child has exited and was reaped.
func (c *StdioConn) Exited() <-chan struct{} { return c.child.Done() }

// ExitErr returns, once Exited is closed, nil when the child exited with
// status 0, or an *exec.ExitError describing its status or the signal that
// killed it.
func (c *StdioConn) ExitErr() error { return c.child.Err() }

// ExitStatus returns, once Exited is closed, the child's exit code, or
// 128+N and the signal's name ("SIGKILL") when signal N ended it: the
// mapping "mcptape record" reports, the same on every system (see
// internal/proc). Before the child exited, code is -1.
func (c *StdioConn) ExitStatus() (code int, signal string) {
	st := c.child.Status()
	return st.Code, st.Signal
}

// read delivers the child's output lines until it ends.
func (c *StdioConn) read() {
	lr, err := NewLineReader(c.out, c.max)
	if err != nil { // cannot happen: max is validated
		c.in.finish(fmt.Errorf("transport: stdio: %w", err))
		return
	}
	for {
		fr, err := lr.Next()
		if err != nil {
			c.in.finish(c.endError(err))
			return
		}
		in := Incoming{
			Frame:     bytes.Clone(fr.Data),
			Stream:    StreamStdout,
			Time:      time.Now(),
			Truncated: fr.Truncated,
		}
		if in.Frame == nil {
			in.Frame = []byte{}
		}
		if c.in.putWait(context.Background(), in) != nil {
			return
		}
	}
}

// endError describes the end of the child's output. When the output ended
// with EOF it waits a little for the child to exit so that the message can
// say how it exited.
func (c *StdioConn) endError(err error) error {
	if c.closing.Load() {
		return ErrClosed
	}
	what := "closed its output"
	if !errors.Is(err, io.EOF) {
		what = "output failed: " + err.Error()
	}
	t := time.NewTimer(c.grace)
	defer t.Stop()
	select {
	case <-c.child.Done():
		status := "exit status 0"
		if err := c.child.Err(); err != nil {
			status = err.Error()
		}
		return fmt.Errorf("transport: stdio server %s (pid %d) %s (%s): %w", c.argv0, c.Pid(), what, status, ErrServerClosed)
	case <-t.C:
		return fmt.Errorf("transport: stdio server %s (pid %d) %s but is still running: %w", c.argv0, c.Pid(), what, ErrServerClosed)
	}
}

// Send writes frame and "\n" (none with opt.NoEOL) to the server's stdin. The frame must not
// contain a newline; an empty frame writes an empty line (a recorded
// client's blank line, replayed as it was sent). If ctx ends while the
// write is blocked (the server does not read), Send returns ctx's error;
// if part of the line was already written the connection is broken and
// every later Send fails.
// Of opt, Deadline (the write's deadline), Written and NoEOL apply over
// stdio.
func (c *StdioConn) Send(ctx context.Context, frame []byte, opt SendOptions) (*Exchange, error) {
	if c.closing.Load() {
		return nil, ErrClosed
	}
	if i := bytes.IndexByte(frame, '\n'); i >= 0 {
		return nil, fmt.Errorf("transport: stdio frame holds a newline at byte %d; frames must be one line", i)
	}
	ex := &Exchange{ID: c.seq.Add(1), fin: true, Sent: time.Now()}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.broken != nil {
		return nil, c.broken
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("transport: stdio send: %w", err)
	}
	if !opt.Deadline.IsZero() {
		if !time.Now().Before(opt.Deadline) {
			return nil, fmt.Errorf("transport: stdio send: %w", context.DeadlineExceeded)
		}
		c.stdin.SetWriteDeadline(opt.Deadline)
	}
	var fired chan struct{}
	var stop func() bool
	if ctx.Done() != nil {
		fired = make(chan struct{})
		stop = context.AfterFunc(ctx, func() {
			c.stdin.SetWriteDeadline(time.Unix(1, 0))
			close(fired)
		})
	}
	n, err := c.writeLine(frame, !opt.NoEOL)
	switch {
	case stop != nil && !stop():
		<-fired
		c.stdin.SetWriteDeadline(time.Time{})
		if err != nil && ctx.Err() != nil {
			err = ctx.Err()
		}
	case !opt.Deadline.IsZero():
		c.stdin.SetWriteDeadline(time.Time{})
		if errors.Is(err, os.ErrDeadlineExceeded) {
			err = context.DeadlineExceeded
		}
	}
	want := len(frame) + 1
	if opt.NoEOL {
		want = len(frame)
	}
	if err != nil {
		return nil, c.writeFailed(n, want, err)
	}
	if opt.NoEOL { // the end of the client's input, as recorded
		c.stdin.Close()
		c.broken = errInputEnded
	}
	ex.Responded = time.Now()
	if opt.Written != nil {
		opt.Written()
	}
	return ex, nil
}

// writeLine writes frame and, when eol, "\n", in one write when the frame
// is small.
func (c *StdioConn) writeLine(frame []byte, eol bool) (int, error) {
	if eol && len(frame) <= smallLine {
		c.wbuf = append(append(c.wbuf[:0], frame...), '\n')
		return c.stdin.Write(c.wbuf)
	}
	n, err := c.stdin.Write(frame)
	if err != nil || !eol {
		return n, err
	}
	m, err := c.stdin.Write([]byte{'\n'})
	return n + m, err
}

// errInputEnded is what a Send fails with after one with NoEOL, which
// ended the server's input.
var errInputEnded = errors.New("transport: stdio send: the server's input was ended after a last line without newline")

// errLineCut is what a Send fails with once a line was cut by the
// deadline or cancellation of an earlier one.
var errLineCut = errors.New("the connection is broken: a line was cut earlier")

// writeFailed turns a failed write of want bytes (n written) into Send's
// error, marking the connection broken when a partial line went out.
func (c *StdioConn) writeFailed(n, want int, err error) error {
	switch {
	case c.closing.Load():
		err = ErrClosed
	case errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed):
		err = fmt.Errorf("transport: stdio server %s (pid %d) no longer reads its input: %w", c.argv0, c.Pid(), ErrServerClosed)
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		err = fmt.Errorf("transport: stdio send: %w", err)
	default:
		err = fmt.Errorf("transport: stdio send: %w", err)
	}
	if n > 0 && n < want {
		cut := fmt.Sprintf("transport: stdio connection broken: a line was cut after %d of %d bytes", n, want)
		c.broken = fmt.Errorf("%s: %w", cut, err)
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			// This Send's deadline or cancellation, not the later ones':
			// they fail at once.
			err, c.broken = c.broken, fmt.Errorf("%s (%v): %w", cut, err, errLineCut)
			return err
		}
		return c.broken
	}
	return err
}

// Recv returns the next line the server wrote. See Conn.
func (c *StdioConn) Recv(ctx context.Context) (Incoming, error) {
	return c.in.get(ctx)
}

// Close shuts the server down as the MCP specification asks: it closes the
// server's stdin, waits up to the grace period for it to exit, then sends
// SIGTERM to its process group, waits again, then SIGKILL (proc.Child.Stop;
// what is left of the group once the server exited is killed); once the
// WithStopNow context has ended, SIGKILL comes at once. Recv returns
// ErrClosed at once. Close returns an error only when the server could not
// be stopped; how it exited is given by ExitErr.
func (c *StdioConn) Close() error {
	c.closeOnce.Do(func() {
		c.closing.Store(true)
		c.in.shut()
		if err := c.child.StopContext(c.now, c.stdin, c.grace); err != nil {
			c.closeErr = fmt.Errorf("transport: stdio server %s: %w", c.argv0, err)
		}
		c.out.Close() // unblocks the reader if grandchildren hold stdout open
	})
	return c.closeErr
}
