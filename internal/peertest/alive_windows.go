package peertest

import "golang.org/x/sys/windows"

// Alive reports whether process pid is a process that has not exited.
func Alive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	const stillActive = 259 // STILL_ACTIVE
	return windows.GetExitCodeProcess(h, &code) == nil && code == stillActive
}
