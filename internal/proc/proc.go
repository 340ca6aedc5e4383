package proc

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// ExitCannotStart is the exit code of a command that could not be started
// (not found, not executable...), as shells have it.
const ExitCannotStart = 127

// Child is a started child process, reaped in the background. Its methods
// may be called from several goroutines at once.
type Child struct {
	cmd  *exec.Cmd
	sys  *sysChild // what the system needs to reach the group (Windows: the job)
	done chan struct{}
	err  error // cmd.Wait's result, set before done closes

	mu       sync.Mutex
	killedBy syscall.Signal // systems without signals: the last signal emulated by termination
}

// Prepare sets cmd's system attributes for the policy of this package (a
// process group of its own; on Linux, SIGTERM when mcptape dies). Start
// calls it; a command run by exec.Cmd's own Run or Output gets the group
// and parent-death signal, but on Windows no job object.
func Prepare(cmd *exec.Cmd) { cmd.SysProcAttr = sysProcAttr() }

// Start prepares cmd (Prepare), starts it, puts it in a job object on
// Windows, and reaps it in the background: Done is closed once it exited.
// Its error is exec.Cmd.Start's.
func Start(cmd *exec.Cmd) (*Child, error) {
	Prepare(cmd)
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &Child{cmd: cmd, done: make(chan struct{})}
	c.sys = attach(cmd.Process.Pid)
	go func() {
		c.err = cmd.Wait()
		c.sys.exited()
		close(c.done)
	}()
	return c, nil
}

// Pid returns the child's process id (on Unix also its process group id).
func (c *Child) Pid() int { return c.cmd.Process.Pid }

// Done returns a channel closed once the child has exited and was reaped.
func (c *Child) Done() <-chan struct{} { return c.done }

// Err returns, once Done is closed, exec.Cmd.Wait's error: nil for exit
// status 0, an *exec.ExitError for another status or a signal.
func (c *Child) Err() error {
	select {
	case <-c.done:
		return c.err
	default:
		return nil
	}
}

// Signal sends sig to the child's process group (to the child alone when
// that fails). A child already gone is not an error. See the package
// documentation for what a signal becomes on Windows.
func (c *Child) Signal(sig syscall.Signal) error {
	select {
	case <-c.done:
		return nil
	default:
	}
	// Held across the signal: Status, once the child is gone, must see
	// the termination that stood in for sig.
	c.mu.Lock()
	defer c.mu.Unlock()
	emulated, err := c.sys.signal(c.Pid(), sig)
	if emulated {
		c.killedBy = sig
	}
	return err
}

// Stop stops the child by the policy of this package: it closes stdin and
// waits up to grace for the child to exit (when stdin is not nil), sends
// SIGTERM to its group, waits again, sends SIGKILL and waits again. Once
// the child has exited, the rest of its group is killed. Stop returns an error only when
// the child could not be stopped; how it exited is given by Status.
func (c *Child) Stop(stdin io.Closer, grace time.Duration) error {
	return c.StopContext(context.Background(), stdin, grace)
}

// StopContext is Stop, hurried by ctx: once ctx has ended, the waits for
// stdin's end and for SIGTERM are cut and SIGKILL follows at once (the
// caller was told to stop now: a second Ctrl-C).
func (c *Child) StopContext(ctx context.Context, stdin io.Closer, grace time.Duration) error {
	plan := []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL}
	if stdin != nil {
		stdin.Close()
		plan = append([]syscall.Signal{0}, plan...)
	}
	for _, sig := range plan {
		hurry := ctx.Done()
		if sig == syscall.SIGKILL {
			hurry = nil // the last step: wait for the end in any case
		} else if ctx.Err() != nil {
			continue
		}
		if sig != 0 {
			if err := c.Signal(sig); err != nil && sig == syscall.SIGKILL {
				return fmt.Errorf("kill %s (pid %d): %w", c.cmd.Path, c.Pid(), err)
			}
		}
		if c.wait(grace, hurry) {
			c.sys.killRest(c.Pid())
			return nil
		}
	}
	return fmt.Errorf("%s (pid %d) still running after SIGKILL", c.cmd.Path, c.Pid())
}

// KillRest kills what is left of the child's process group once the child
// has exited by itself (a grandchild it left running), as Stop does after
// a stop. Before the child exited it does nothing.
func (c *Child) KillRest() {
	select {
	case <-c.done:
		c.sys.killRest(c.Pid())
	default:
	}
}

// wait waits up to d for the child to be reaped, or until hurry is
// closed (nil: never).
func (c *Child) wait(d time.Duration, hurry <-chan struct{}) bool {
	t := time.NewTimer(max(d, 0))
	defer t.Stop()
	select {
	case <-c.done:
		return true
	case <-hurry:
		select {
		case <-c.done:
			return true
		default:
			return false
		}
	case <-t.C:
		select {
		case <-c.done:
			return true
		default:
			return false
		}
	}
}

// Status returns, once Done is closed, how the child ended (see ExitStatus;
// on Windows a termination by Signal reads as that signal).
func (c *Child) Status() Status {
	select {
	case <-c.done:
	default:
		return Status{Code: -1}
	}
	s := ExitStatus(c.cmd.ProcessState)
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.Signal == "" && c.killedBy != 0 && s.Code == 128+int(c.killedBy) {
		s.Signal = SignalName(c.killedBy)
	}
	return s
}

// Status is how a process ended.
type Status struct {
	Code   int    // the exit code; 128+N when signal N ended it; -1 when unknown
	Signal string // the signal that ended it ("SIGKILL"), "" when it exited
}

// ExitStatus maps a process state to a Status: 128+N and the signal's name
// when signal N killed it, else its exit code; -1 for a nil state.
func ExitStatus(ps *os.ProcessState) Status {
	if ps == nil {
		return Status{Code: -1}
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		sig := ws.Signal()
		return Status{Code: 128 + int(sig), Signal: SignalName(sig)}
	}
	return Status{Code: ps.ExitCode()}
}

// signalNames are the conventional names of the signals every system
// defines (osSignalNames has the others).
var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGILL: "SIGILL", syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT",
	syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE", syscall.SIGKILL: "SIGKILL",
	syscall.SIGSEGV: "SIGSEGV", syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM",
	syscall.SIGTERM: "SIGTERM",
}

// SignalName returns the conventional name of a signal ("SIGTERM").
func SignalName(s syscall.Signal) string {
	if n, ok := signalNames[s]; ok {
		return n
	}
	if n, ok := osSignalNames[s]; ok {
		return n
	}
	return fmt.Sprintf("signal %d", int(s))
}

// Kill kills cmd's process group (on Windows its process), for a command
// run by exec.Cmd's own Run or Output: use it as cmd.Cancel. A command not
// started, or gone, is not an error.
func Kill(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	_, err := (&sysChild{}).signal(cmd.Process.Pid, syscall.SIGKILL)
	return err
}
