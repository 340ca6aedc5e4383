package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFileLines is the house limit on a source file's length ("files under
// about 600 lines"): a file past it is split along a seam.
const maxFileLines = 600

// TestFilesUnderLimit: every non-test Go file of the command stays within
// maxFileLines (load.go had grown to 650: its flag checks now have a file
// of their own, load_options.go).
func TestFilesUnderLimit(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(data, []byte("\n")); n > maxFileLines {
			t.Errorf("%s: %d lines, over %d: split it along a seam", f, n, maxFileLines)
		}
	}
}
