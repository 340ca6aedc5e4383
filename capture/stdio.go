package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/mcptape/mcptape/internal/proc"
	"github.com/mcptape/mcptape/tape"
	"github.com/mcptape/mcptape/transport"
)

// DefaultGrace is the default wait between the steps of a child's shutdown:
// stdin closed, SIGTERM, SIGKILL.
const DefaultGrace = 5 * time.Second

// DefaultSession is the session name of a stdio recording: one child
// process is one session, so one tape holds one session.
const DefaultSession = "1"

// ErrStart is wrapped by the error RunStdio returns when the command could
// not be started (not found, not executable, bad working directory...). A
// command-line tool conventionally exits with code 127 then.
var ErrStart = errors.New("cannot start")

// Close reasons recorded in the "close" event and returned in
// Result.Reason.
const (
	ReasonServerExit = "server-exit" // the child exited by itself
	ReasonClientEOF  = "client-eof"  // the client closed its end of stdin
	ReasonSignal     = "signal"      // mcptape received a signal
	ReasonContext    = "context"     // the caller's context was cancelled
)

// RecordWriter is where a proxy records: *tape.Writer implements it. Write
// must be safe for concurrent use, must not keep r or its slices after it
// returns, and should not block on disk I/O. When it also has
// *tape.Writer's WriteClassified method, messages are recorded with that,
// and the frame's classification (to flag invalid frames) is taken from it.
type RecordWriter interface {
	Write(r *tape.Record) error
}

// StdioOptions configures RunStdio. Command, Stdin, Stdout and Tape are
// required; every other field has a usable zero value.
type StdioOptions struct {
	Command []string  // program and its arguments
	Env     []string  // the child's whole environment ("K=V"); nil inherits this process's
	Dir     string    // the child's working directory; "" is the current one
	Stdin   io.Reader // the client's side: bytes for the child's stdin
	Stdout  io.Writer // the client's side: receives the child's stdout, byte-exact
	Stderr  io.Writer // receives the child's stderr, byte-exact; nil discards it (it is still recorded)
	Tape    RecordWriter

	// CloseStdout makes RunStdio close Stdout, when it is an io.Closer, as
	// soon as the child's stdout has ended, so the client sees end-of-file
	// without waiting for the recording to be closed.
	CloseStdout bool

	// Grace is the wait between the steps of a shutdown; 0 means
	// DefaultGrace, a negative value is an error. It also bounds how long
	// RunStdio drains the child's output after the child exited (in case a
	// grandchild keeps the pipes open).
	Grace time.Duration

	// MaxFrame bounds the bytes recorded for one line (0 means
	// transport.DefaultMaxFrame). A longer line is forwarded whole but
	// recorded cut, followed by an "error" event saying so.
	MaxFrame int

	// Session names the recorded session; "" means DefaultSession.
	Session string

	// Signals, when not nil, delivers signals received by the caller
	// (SIGINT, SIGTERM...) to forward to the child; see RunStdio.
	Signals <-chan os.Signal

	// Warnf, when not nil, receives one line for every problem that does
	// not stop the run (a recording failure, a client that stopped
	// reading...). Debugf receives lifecycle details. Both may be called
	// from several goroutines at once.
	Warnf, Debugf func(format string, args ...any)
}

// Result tells how a stdio recording ended.
type Result struct {
	Pid      int      // the child's process id (0 if it did not start)
	ExitCode int      // the child's exit code; 128+N when killed by signal N; 127 when it could not start
	Signal   string   // the signal that killed the child ("SIGKILL"...), "" if it exited
	Sent     []string // the signals RunStdio sent to the child, in order
	Reason   string   // what started the end of the session: one of the Reason* constants

	ClientMessages int64 // frames recorded client to server
	ServerMessages int64 // frames recorded server to client
	StderrLines    int64 // stderr lines recorded
	Truncated      int64 // frames recorded cut because they exceeded MaxFrame
	Invalid        int64 // frames flagged as not valid JSON-RPC

	// RecordErr is the first error the tape returned; forwarding is never
	// affected by it, but the tape misses records from then on.
	RecordErr error
}

// check validates o and fills in defaults.
func (o *StdioOptions) check() error {
	switch {
	case len(o.Command) == 0 || o.Command[0] == "":
		return errors.New("capture: no command to run")
	case o.Stdin == nil:
		return errors.New("capture: nil Stdin")
	case o.Stdout == nil:
		return errors.New("capture: nil Stdout")
	case o.Tape == nil:
		return errors.New("capture: nil Tape")
	case o.Grace < 0:
		return fmt.Errorf("capture: negative grace period %v", o.Grace)
	case o.MaxFrame < 0:
		return fmt.Errorf("capture: negative maximum frame size %d", o.MaxFrame)
	}
	if o.Grace == 0 {
		o.Grace = DefaultGrace
	}
	if o.MaxFrame == 0 {
		o.MaxFrame = transport.DefaultMaxFrame
	}
	if o.Session == "" {
		o.Session = DefaultSession
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	if o.Warnf == nil {
		o.Warnf = func(string, ...any) {}
	}
	if o.Debugf == nil {
		o.Debugf = func(string, ...any) {}
	}
	return nil
}

// RunStdio runs o.Command as a child process, forwards the client's stdin to
// it and its stdout and stderr back, byte for byte and without waiting for
// the recorder, and records every line as a tape record: messages both ways
// (tape.ClientToServer, tape.ServerToClient) and stderr lines as "stderr"
// events. It returns once the child has exited and its output is drained.
//
// Lifecycle:
//   - The client closes stdin: the child's stdin is closed; after Grace the
//     child's process group gets SIGTERM, after another Grace SIGKILL.
//   - A signal arrives on o.Signals: it is forwarded to the child's group at
//     once; after Grace SIGTERM follows (unless the signal was SIGTERM),
//     after another Grace SIGKILL. A second signal on o.Signals (Ctrl-C
//     again) is forwarded too and then cuts the shutdown short: SIGKILL at
//     once, as "load" and "replay" kill their servers on a second signal.
//   - ctx is cancelled: as if SIGTERM had arrived on o.Signals, unless a
//     shutdown is already under way (a caller may cancel ctx on the very
//     signals it forwards).
//   - The child exits (by itself or not): its stdout and stderr are read to
//     their end (for at most Grace, in case a grandchild holds them open),
//     Stdout is closed if o.CloseStdout, and RunStdio returns.
//
// The tape gets an "open" event with the child's pid first, and at the end an
// "exit" event {"code", "signal", "sent"} and a "close" event {"by": reason};
// after RunStdio returns nothing more is written to o.Tape, which the caller
// then closes. A command that cannot start leaves one "error" event, and the
// returned error wraps ErrStart and names the command.
//
// A Read on o.Stdin still blocked when RunStdio returns is abandoned: its
// goroutine ends when the Read does, and forwards and records nothing more.
// (When o.Stdin is a pipe, *os.File, it ends at once: see stdio_rawio.go.)
//
// When o.Stdin or o.Stdout is a pipe (an *os.File, as a client starting
// "mcptape record" gives it), RunStdio opens it again on Linux, as a
// description of its own in non-blocking mode, and reads or writes that
// instead; o.Stdin and o.Stdout keep their mode (see stdio_rawio.go).
func RunStdio(ctx context.Context, o StdioOptions) (Result, error) {
	if err := o.check(); err != nil {
		return Result{}, err
	}
	rec := newRecorder(o.Tape, o.Session, o.Warnf)
	if o.Dir != "" {
		// The kernel reports a bad directory as a failure to execute the
		// program; say which directory it was.
		if _, err := os.Stat(o.Dir); err != nil {
			return startFailed(rec, o.Command, fmt.Errorf("working directory: %w", err))
		}
	}
	p, err := newPipes()
	if err != nil {
		return Result{}, err
	}
	cmd := exec.Command(o.Command[0], o.Command[1:]...)
	cmd.Env, cmd.Dir = o.Env, o.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.childIn, p.childOut, p.childErr
	child, err := proc.Start(cmd) // its process group, death with mcptape: see internal/proc
	if err != nil {
		p.closeAll()
		return startFailed(rec, o.Command, unwrapExec(err))
	}
	p.closeChildEnds()
	pid := child.Pid()
	o.Debugf("started %s (pid %d)", o.Command[0], pid)
	rec.event(tape.EventOpen, "", openData{Pid: pid, Command: RedactArgs(o.Command)})

	r := &run{o: &o, rec: rec, pipes: p, child: child}
	r.openClientPipes()
	defer r.closeClientPipes()
	r.startPumps()
	r.superviseChild(ctx)
	r.drain()
	child.KillRest() // a grandchild the server left: the policy of internal/proc
	res := r.result()
	rec.event(tape.EventExit, "", exitData{Code: res.ExitCode, Signal: res.Signal, Sent: res.Sent})
	rec.event(tape.EventClose, "", closeData{By: res.Reason})
	rec.close()
	p.closeAll()
	res.RecordErr = rec.firstErr()
	return res, nil
}

// startFailed records and returns the failure to start command.
func startFailed(rec *recorder, command []string, err error) (Result, error) {
	err = fmt.Errorf("%w %s: %w", ErrStart, command[0], err)
	rec.event(tape.EventError, "", errorData{Error: err.Error(), Command: RedactArgs(command)})
	rec.close()
	return Result{ExitCode: proc.ExitCannotStart, RecordErr: rec.firstErr()}, err
}

// unwrapExec drops the wrapper of a start error that only repeats the
// command's name ("exec: NAME: ..." and "fork/exec NAME: ...").
func unwrapExec(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Op == "fork/exec" {
		return pe.Err
	}
	return err
}

// pipes are the three OS pipes between mcptape and the child. The parent's
// ends are pollable *os.File values, so a blocked Read or Write on them can
// be interrupted with a deadline or Close.
type pipes struct {
	childIn, in    *os.File // child's stdin (read end), our writer to it
	out, childOut  *os.File // our reader of the child's stdout, its write end
	errR, childErr *os.File
}

func newPipes() (*pipes, error) {
	var p pipes
	var err error
	if p.childIn, p.in, err = os.Pipe(); err != nil {
		return nil, fmt.Errorf("capture: stdin pipe: %w", err)
	}
	if p.out, p.childOut, err = os.Pipe(); err != nil {
		p.closeAll()
		return nil, fmt.Errorf("capture: stdout pipe: %w", err)
	}
	if p.errR, p.childErr, err = os.Pipe(); err != nil {
		p.closeAll()
		return nil, fmt.Errorf("capture: stderr pipe: %w", err)
	}
	return &p, nil
}

// closeChildEnds closes the child's ends in this process once the child has
// them, so that end-of-file propagates.
func (p *pipes) closeChildEnds() {
	for _, f := range []*os.File{p.childIn, p.childOut, p.childErr} {
		if f != nil {
			f.Close()
		}
	}
}

func (p *pipes) closeAll() {
	p.closeChildEnds()
	for _, f := range []*os.File{p.in, p.out, p.errR} {
		if f != nil {
			f.Close()
		}
	}
}

// run is the state of one RunStdio call.
type run struct {
	o     *StdioOptions
	rec   *recorder
	pipes *pipes
	child *proc.Child

	// stdin and stdout are the client's pipes opened again, non-blocking
	// (see reopenPipe); nil when o.Stdin or o.Stdout is not a pipe.
	stdin, stdout *os.File

	inDone, outDone, errDone chan struct{}
	reason                   string
	sent                     []string
	received                 int // signals received on o.Signals
}

// startPumps starts the three forwarding goroutines.
func (r *run) startPumps() {
	r.inDone, r.outDone, r.errDone = make(chan struct{}), make(chan struct{}), make(chan struct{})
	in := newPump(r.rec, tape.ClientToServer, r.o.Stdin, r.pipes.in, r.o.MaxFrame)
	in.onDstErr = func(err error) { r.o.Debugf("server stopped reading its stdin: %v", err) }
	out := newPump(r.rec, tape.ServerToClient, r.pipes.out, r.o.Stdout, r.o.MaxFrame)
	out.onDstErr = func(err error) { r.o.Warnf("client stopped reading: %v (still recording)", err) }
	in.own, out.own = &progress{}, &progress{}
	in.other, out.other = out.own, in.own
	setRaw(in, r.stdin, "stdin", r.pipes.in) // r.stdin nil: o.Stdin is read as it is
	setRaw(out, r.pipes.out, r.pipes.out.Name(), r.stdout)
	errp := newPump(r.rec, "", r.pipes.errR, r.o.Stderr, r.o.MaxFrame)
	setRaw(errp, r.pipes.errR, r.pipes.errR.Name(), nil)
	errp.stderr = true
	errp.onDstErr = func(err error) { r.o.Warnf("cannot forward the server's stderr: %v (still recording)", err) }

	go func() {
		if err := in.run(); err != nil && !errors.Is(err, os.ErrClosed) { // closed: RunStdio returned
			r.o.Debugf("reading the client's stdin: %v", err)
		}
		// inDone first: a child that exits on end-of-file then exits
		// after it (see superviseChild).
		close(r.inDone)
		r.pipes.in.Close() // the child sees end-of-file
	}()
	go func() {
		defer close(r.outDone)
		if err := out.run(); err != nil && !errors.Is(err, os.ErrClosed) && !errors.Is(err, os.ErrDeadlineExceeded) {
			r.o.Warnf("reading the server's stdout: %v", err)
		}
		if r.o.CloseStdout {
			if r.stdout != nil {
				r.stdout.Close() // the client sees end-of-file once both are closed
			}
			if c, ok := r.o.Stdout.(io.Closer); ok {
				c.Close()
			}
		}
	}()
	go func() {
		defer close(r.errDone)
		if err := errp.run(); err != nil && !errors.Is(err, os.ErrClosed) && !errors.Is(err, os.ErrDeadlineExceeded) {
			r.o.Warnf("reading the server's stderr: %v", err)
		}
	}()
}

// superviseChild waits for the child to exit, driving the shutdown sequence
// when the client closes stdin, a signal arrives or ctx is cancelled. The
// sequence is internal/proc's stop policy, with received signals forwarded
// on the way.
func (r *run) superviseChild(ctx context.Context) {
	esc := escalation{grace: r.o.Grace}
	defer esc.stop()
	inDone, done := r.inDone, ctx.Done()
	for {
		select {
		case <-r.child.Done():
			if r.reason == "" && inDone != nil {
				select {
				case <-inDone: // both were ready: the client's end came first
					r.reason = ReasonClientEOF
				default:
				}
			}
			if r.reason == "" {
				r.reason = ReasonServerExit
			}
			return
		case <-inDone:
			inDone = nil
			r.o.Debugf("client closed stdin; closed the server's stdin")
			r.begin(&esc, ReasonClientEOF, syscall.SIGTERM, syscall.SIGKILL)
		case s := <-r.o.Signals:
			r.forward(&esc, s)
		case <-done:
			done = nil
			select {
			case s := <-r.o.Signals: // a signal that also cancelled ctx
				r.forward(&esc, s)
				continue
			default:
			}
			if esc.started() {
				continue // a shutdown is under way (perhaps for the signal that cancelled ctx)
			}
			r.o.Debugf("context cancelled: %v", ctx.Err())
			r.send(syscall.SIGTERM)
			r.begin(&esc, ReasonContext, syscall.SIGKILL)
		case <-esc.c():
			r.send(esc.next())
		}
	}
}

// forward sends a received signal to the child and starts the shutdown.
func (r *run) forward(esc *escalation, s os.Signal) {
	sig, ok := s.(syscall.Signal)
	if !ok {
		return
	}
	r.o.Debugf("received %s; forwarding it", proc.SignalName(sig))
	r.send(sig)
	if r.received++; r.received > 1 { // Ctrl-C again: no more waiting
		r.o.Debugf("a second signal: killing the server")
		r.send(syscall.SIGKILL)
		esc.plan = nil
		return
	}
	if sig == syscall.SIGTERM {
		r.begin(esc, ReasonSignal, syscall.SIGKILL)
	} else {
		r.begin(esc, ReasonSignal, syscall.SIGTERM, syscall.SIGKILL)
	}
}

// begin starts a shutdown sequence unless one is already under way.
func (r *run) begin(esc *escalation, reason string, plan ...syscall.Signal) {
	if esc.started() {
		return
	}
	r.reason = reason
	esc.start(plan)
}

// send signals the child's process group (falling back to the child alone;
// on Windows, see internal/proc).
func (r *run) send(sig syscall.Signal) {
	name := proc.SignalName(sig)
	r.sent = append(r.sent, name)
	r.o.Debugf("sending %s to pid %d", name, r.child.Pid())
	if err := r.child.Signal(sig); err != nil {
		r.o.Warnf("sending %s to the server: %v", name, err)
	}
}

// drain waits for the child's stdout and stderr to reach their end. If they
// are still open after Grace (a grandchild holding them), the reads are cut
// after a short final deadline; a pump stuck writing to the client is
// abandoned after one more Grace.
func (r *run) drain() {
	both := func(timeout time.Duration) bool {
		t := time.NewTimer(timeout)
		defer t.Stop()
		for _, c := range []chan struct{}{r.outDone, r.errDone} {
			select {
			case <-c:
			case <-t.C:
				return false
			}
		}
		return true
	}
	if both(r.o.Grace) {
		return
	}
	r.o.Warnf("the server's output is still open after it exited; stopping in 100ms")
	deadline := time.Now().Add(100 * time.Millisecond)
	r.pipes.out.SetReadDeadline(deadline)
	r.pipes.errR.SetReadDeadline(deadline)
	if !both(r.o.Grace) {
		r.o.Warnf("gave up forwarding the server's output")
	}
}

// result builds the Result once the child has exited.
func (r *run) result() Result {
	res := Result{Pid: r.child.Pid(), Sent: r.sent, Reason: r.reason}
	res.ClientMessages = r.rec.c2s.Load()
	res.ServerMessages = r.rec.s2c.Load()
	res.StderrLines = r.rec.stderr.Load()
	res.Truncated = r.rec.truncated.Load()
	res.Invalid = r.rec.invalid.Load()
	if n := r.rec.unordered.Load(); n > 0 {
		r.o.Debugf("%d chunks recorded without waiting for the other direction (it was blocked forwarding)", n)
	}
	st := r.child.Status()
	res.ExitCode, res.Signal = st.Code, st.Signal
	if st.Code == -1 {
		r.o.Warnf("waiting for the server: %v", r.child.Err())
		return res
	}
	if res.Signal != "" {
		r.o.Debugf("server killed by %s (exit code %d)", res.Signal, res.ExitCode)
	} else {
		r.o.Debugf("server exited with code %d", res.ExitCode)
	}
	return res
}

// escalation is a pending sequence of signals, one every grace period.
type escalation struct {
	grace time.Duration
	plan  []syscall.Signal
	timer *time.Timer
}

func (e *escalation) started() bool { return e.timer != nil }

func (e *escalation) start(plan []syscall.Signal) {
	e.plan = plan
	e.timer = time.NewTimer(e.grace)
}

// c is the channel on which the next step is due (nil when none is).
func (e *escalation) c() <-chan time.Time {
	if e.timer == nil || len(e.plan) == 0 {
		return nil
	}
	return e.timer.C
}

// next pops the signal now due and schedules the one after it.
func (e *escalation) next() syscall.Signal {
	s := e.plan[0]
	e.plan = e.plan[1:]
	if len(e.plan) > 0 {
		e.timer.Reset(e.grace)
	}
	return s
}

func (e *escalation) stop() {
	if e.timer != nil {
		e.timer.Stop()
	}
}
