package clientconfig

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
)

// BackupSuffix is added to a configuration file's name for the copy kept
// before each change.
const BackupSuffix = ".mcptape-backup"

// Change is the result of WrapFile or UnwrapFile.
type Change struct {
	Path     string    // the configuration file
	Backup   string    // the copy of it before the change; empty when nothing changed
	Outcomes []Outcome // what happened to each entry
}

// WrapFile wraps the chosen entries of the configuration file at path
// (see Wrap).
func (c *Client) WrapFile(path string, o Options) (Change, error) {
	return rewrite(path, o, c.Wrap)
}

// UnwrapFile unwraps the chosen entries of the configuration file at path
// (see Unwrap).
func (c *Client) UnwrapFile(path string, o Options) (Change, error) {
	return rewrite(path, o, c.Unwrap)
}

// rewrite applies change to the file at path. When the content changes,
// the old content is first copied to path+BackupSuffix, then the new one
// replaces the file at once (written beside it and renamed), keeping its
// permissions; a file that does not change is not written.
func rewrite(path string, o Options, change func([]byte, Options) ([]byte, []Outcome, error)) (Change, error) {
	ch := Change{Path: path}
	old, err := os.ReadFile(path)
	if err != nil {
		return ch, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return ch, err
	}
	doc, outcomes, err := change(old, o)
	if err != nil {
		return ch, fmt.Errorf("%s: %w", path, err)
	}
	ch.Outcomes = outcomes
	if bytes.Equal(doc, old) {
		return ch, nil
	}
	ch.Backup = path + BackupSuffix
	if err := writeAtomic(ch.Backup, old, st.Mode().Perm()); err != nil {
		return ch, fmt.Errorf("keeping a backup: %w", err)
	}
	if err := writeAtomic(path, doc, st.Mode().Perm()); err != nil {
		return ch, err
	}
	return ch, nil
}

// writeAtomic writes data to a new file beside path and renames it over
// path, so that a reader sees the old content or the new, never a part.
func writeAtomic(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename, nothing is there
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil && !os.IsPermission(err) {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
