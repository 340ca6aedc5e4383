// Package privfile creates the files mcptape writes other people's data
// to (tapes, exports, reports, load results): readable and writable by
// their owner only, whether or not they existed before.
package privfile

import (
	"fmt"
	"os"
)

// Mode is the permission of every file Create returns.
const Mode os.FileMode = 0o600

// Create creates the file at path, or truncates it, open for writing,
// private to its owner. A file that already existed with a wider access
// is narrowed before anything is written to it (os.OpenFile's mode
// applies only to a file it creates). On Unix that is mode 0600. On
// Windows, where permission bits are only a read-only flag, the file gets
// a protected access list (nothing inherited from its folder) that grants
// the current user alone full access. A path that is not a regular file
// (a device such as /dev/null, a named pipe) is opened as it is, its
// access left alone: it is the system's, not a copy of the data.
func Create(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, Mode)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && !fi.Mode().IsRegular() {
		return f, nil
	}
	if err := restrict(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("make %s private: %w", path, err)
	}
	return f, nil
}

// CreateNew creates the file at path, open for writing, private to its
// owner as Create makes it; it fails with an error wrapping fs.ErrExist
// when the path exists, so that nothing is overwritten (the check and the
// creation are one step).
func CreateNew(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, Mode)
	if err != nil {
		return nil, err
	}
	if err := restrict(f); err != nil {
		f.Close()
		os.Remove(path) // ours: it did not exist
		return nil, fmt.Errorf("make %s private: %w", path, err)
	}
	return f, nil
}

// Remove removes the output file at path that could not be written
// whole, as Create opened it; a path that is not a regular file (a
// device such as /dev/full, a named pipe, a symbolic link) is left
// alone.
func Remove(path string) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() {
		os.Remove(path)
	}
}
