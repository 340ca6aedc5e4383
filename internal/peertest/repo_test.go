package peertest

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestModulePath(t *testing.T) {
	tests := []struct {
		name, gomod, want string
	}{
		{"plain", "module github.com/mcptape/mcptape\n\ngo 1.25.0\n", ModulePath},
		{"comment first", "// the module\nmodule example.com/x // trailing\n", "example.com/x"},
		{"quoted", "module \"example.com/q\"\n", "example.com/q"},
		{"backquoted", "module `example.com/b`\n", "example.com/b"},
		{"tabs and CRLF", "\tmodule\texample.com/t\r\n", "example.com/t"},
		{"no newline", "module m", "m"},
		{"none", "go 1.25\nrequire x v1\n", ""},
		{"modulex is not module", "modulex example.com/y\n", ""},
		{"bad quote", "module \"unterminated\n", ""},
		{"two words", "module a b\n", ""},
		{"empty", "", ""},
		{"module keyword alone", "module\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := modulePath([]byte(tt.gomod)); got != tt.want {
				t.Errorf("modulePath(%q) = %q, want %q", tt.gomod, got, tt.want)
			}
		})
	}
}

func FuzzModulePath(f *testing.F) {
	for _, seed := range []string{
		"module github.com/mcptape/mcptape\n\ngo 1.25.0\n",
		"module \"a b\"\n", "module `x`", "// module no\nmodule yes\n", "module", "\x00module \xff\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got := modulePath(data)
		if got == "" {
			return
		}
		if !strings.Contains(string(data), "module") {
			t.Fatalf("modulePath(%q) = %q without a module directive", data, got)
		}
		// Whatever was found must be found again in a canonical go.mod
		// (quoted, with slashes escaped so that no "//" starts a comment).
		canonical := strings.ReplaceAll(strconv.Quote(got), "/", `\x2f`)
		if again := modulePath([]byte("module " + canonical + "\n")); again != got {
			t.Fatalf("modulePath(%q) = %q, but canonical form gives %q", data, got, again)
		}
	})
}

func TestFindRepoRoot(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("repo/go.mod", "module "+ModulePath+"\n")
	write("repo/testdata/gopeers/go.mod", "module mcptape.test/gopeers\n")
	write("other/go.mod", "module example.com/other\n")
	if err := os.MkdirAll(filepath.Join(root, "repo/internal/x"), 0o755); err != nil {
		t.Fatal(err)
	}
	repo := filepath.Join(root, "repo")

	tests := []struct {
		from    string
		want    string
		wantErr bool
	}{
		{from: "repo", want: repo},
		{from: "repo/internal/x", want: repo},
		{from: "repo/testdata/gopeers", want: repo},
		{from: "other", wantErr: true},
		{from: ".", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.from, func(t *testing.T) {
			got, err := FindRepoRoot(filepath.Join(root, tt.from))
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), ModulePath) {
					t.Fatalf("FindRepoRoot = %q, %v; want an error naming %s", got, err, ModulePath)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("FindRepoRoot = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestRepoRootOfThisPackage(t *testing.T) {
	root := RepoRoot(t)
	if _, err := os.Stat(filepath.Join(root, "internal", "peertest", "repo.go")); err != nil {
		t.Fatalf("RepoRoot = %s, which does not hold this package: %v", root, err)
	}
}
