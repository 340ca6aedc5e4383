package rawio

import "syscall"

// Read is ReadFile on a handle. Windows pipes have no non-blocking mode
// here, so it waits for data; n is 0 when err is not nil.
func Read(fd uintptr, p []byte) (int, error) {
	return countOrErr(syscall.Read(syscall.Handle(fd), p))
}

// Write is WriteFile on a handle; it waits for room. n is 0 when err is
// not nil.
func Write(fd uintptr, p []byte) (int, error) {
	return countOrErr(syscall.Write(syscall.Handle(fd), p))
}

// countOrErr gives n, or 0 with err.
func countOrErr(n int, err error) (int, error) {
	if err != nil {
		return 0, err
	}
	return n, nil
}
