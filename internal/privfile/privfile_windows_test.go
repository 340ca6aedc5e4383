package privfile

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/windows"
)

// TestCreateWindows: the file's access list is protected and has one
// entry, for the current user. (Compiled here, run only on Windows.)
func TestCreateWindows(t *testing.T) {
	for name, create := range map[string]func(string) (*os.File, error){"Create": Create, "CreateNew": CreateNew} {
		t.Run(name, func(t *testing.T) { checkPrivate(t, create) })
	}
}

// checkPrivate creates a file with create and checks its access list.
func checkPrivate(t *testing.T, create func(string) (*os.File, error)) {
	path := filepath.Join(t.TempDir(), "tape")
	f, err := create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		t.Fatal(err)
	}
	ctl, _, err := sd.Control()
	if err != nil {
		t.Fatal(err)
	}
	if ctl&windows.SE_DACL_PROTECTED == 0 {
		t.Error("access list not protected: the folder's entries apply")
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		t.Fatal(err)
	}
	if dacl.AceCount != 1 {
		t.Errorf("access list has %d entries, want 1 (the current user)", dacl.AceCount)
	}
}
