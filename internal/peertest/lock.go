package peertest

import (
	"context"
	"fmt"
	"os"
	"time"
)

// lockPoll is how often lockFile retries a lock held by someone else.
const lockPoll = 100 * time.Millisecond

// fileLock is an exclusive lock on a file (flock(2) on Unix, LockFileEx on
// Windows: see lock_unix.go, lock_windows.go). The kernel drops it when the
// holder exits, so a test binary killed mid-install never wedges the cache.
type fileLock struct{ f *os.File }

// lockFile takes an exclusive lock on path (creating it), waiting until ctx
// ends. Locks are per open file, so two goroutines of one process exclude
// each other as well as two processes do.
func lockFile(ctx context.Context, path string) (*fileLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	for {
		held, err := tryLock(f)
		if err == nil && !held {
			return &fileLock{f: f}, nil
		}
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("lock %s: waiting for another installer: %w", path, context.Cause(ctx))
		case <-time.After(lockPoll):
		}
	}
}

// unlock releases the lock.
func (l *fileLock) unlock() error {
	err := unlockFile(l.f)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("unlock %s: %w", l.f.Name(), err)
	}
	return nil
}
