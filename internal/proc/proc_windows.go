package proc

import (
	"fmt"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// sysProcAttr starts the child in a new console process group, so that a
// CTRL_BREAK_EVENT can be sent to it and its children alone. (Such a group
// ignores Ctrl-C typed in the console: mcptape receives it and forwards it
// as CTRL_BREAK_EVENT, see signal.)
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
}

// sysChild is the job object the child was put in: closing its last
// handle, as Windows does when mcptape exits however it exits, terminates
// every process in it. Processes the child started before it was put in
// the job (between CreateProcess and AssignProcessToJobObject) escape it.
type sysChild struct {
	mu  sync.Mutex
	job windows.Handle // 0: no job (creating or joining it failed)
}

// attach puts process pid in a new job object that kills its processes
// when closed. Failing that, the child still runs, stopped alone.
func attach(pid int) *sysChild {
	s := &sysChild{}
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return s
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return s
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		windows.CloseHandle(job)
		return s
	}
	defer windows.CloseHandle(h)
	if err := windows.AssignProcessToJobObject(job, h); err != nil {
		windows.CloseHandle(job)
		return s
	}
	s.job = job
	return s
}

// exited closes the job once the child has exited: what it started and
// left running is terminated with it.
func (s *sysChild) exited() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.job != 0 {
		windows.CloseHandle(s.job)
		s.job = 0
	}
}

// signal delivers sig the Windows way: SIGINT and SIGTERM as a
// CTRL_BREAK_EVENT to the child's console process group, when it shares
// mcptape's console; anything else (or a child without a console) is
// terminated, the whole job when there is one, with exit code 128+sig
// (emulated is then true).
func (s *sysChild) signal(pid int, sig syscall.Signal) (emulated bool, err error) {
	if sig == syscall.SIGINT || sig == syscall.SIGTERM {
		if windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(pid)) == nil {
			return false, nil
		}
	}
	code := uint32(128 + int(sig))
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.job != 0 {
		if err := windows.TerminateJobObject(s.job, code); err != nil {
			return true, fmt.Errorf("terminate job: %w", err)
		}
		return true, nil
	}
	h, err := windows.OpenProcess(windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return false, nil // gone
	}
	defer windows.CloseHandle(h)
	if err := windows.TerminateProcess(h, code); err != nil {
		return true, fmt.Errorf("terminate: %w", err)
	}
	return true, nil
}

// killRest has nothing to do: the job was closed when the child exited.
func (s *sysChild) killRest(int) {}

// osSignalNames are the names of the signals only this system has: none.
var osSignalNames map[syscall.Signal]string
