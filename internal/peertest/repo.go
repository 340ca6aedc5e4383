package peertest

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// ModulePath is the module path of the repository whose root FindRepoRoot
// looks for.
const ModulePath = "github.com/mcptape/mcptape"

// FindRepoRoot walks up from dir to the directory holding the go.mod of
// ModulePath and returns it. Nested modules (such as testdata/gopeers) are
// skipped over.
func FindRepoRoot(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("repo root from %q: %w", dir, err)
	}
	for d := abs; ; {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		switch {
		case err == nil && modulePath(data) == ModulePath:
			return d, nil
		case err != nil && !errors.Is(err, os.ErrNotExist):
			return "", fmt.Errorf("repo root: %w", err)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("repo root: no go.mod of module %s in %s or above", ModulePath, abs)
		}
		d = parent
	}
}

// RepoRoot returns the root of the mcptape repository that holds the test's
// working directory, failing the test if there is none.
func RepoRoot(t testing.TB) string {
	t.Helper()
	root, err := FindRepoRoot(".")
	if err != nil {
		t.Fatalf("peertest: %v", err)
	}
	return root
}

// modulePath returns the path named by the module directive of a go.mod
// file, or "" when there is none. It reads only what it needs: the first
// "module" line, with // comments and Go string quoting handled.
func modulePath(gomod []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	sc.Buffer(nil, len(gomod)+1)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module")
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '\t' && rest[0] != '"') {
			continue
		}
		rest = strings.TrimSpace(rest)
		if strings.HasPrefix(rest, `"`) || strings.HasPrefix(rest, "`") {
			unq, err := strconv.Unquote(rest)
			if err != nil {
				return ""
			}
			return unq
		}
		if strings.ContainsAny(rest, " \t") {
			return ""
		}
		return rest
	}
	return ""
}
