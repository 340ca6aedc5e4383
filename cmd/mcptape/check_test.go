package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/tapetest"
	"github.com/mcptape/mcptape/tape"
)

// TestCheckCommand: exit codes, formats and output files of mcptape check
// on tapes recorded from real peers (testdata/analysis).
func TestCheckCommand(t *testing.T) {
	dir := t.TempDir()
	notTape := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notTape, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	junit := filepath.Join(dir, "check.xml")
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // in stdout
		stderr string // in stderr
	}{
		{"clean", []string{fixture("everything-stdio")}, 0, "check ok: 1 tape, 1 session", ""},
		{"notes only", []string{fixture("gosdk-refserver")}, 0, "note  tool-error", ""},
		{"fail on", []string{fixture("gosdk-refserver"), "--fail-on", "error,tool-error"}, 1, "FAIL  tool-error", ""},
		{"cut tape", []string{fixture("cut")}, 1, "FAIL  incomplete", ""},
		{"contract", []string{fixture("gosdk-refserver"), "--fail-on", "none", "--expect-tool", "echo", "--forbid-tool", "fail",
			"--threshold", "tools/call:p99<1h"}, 1, "FAIL  forbid-tool fail", ""},
		{"json", []string{fixture("gosdk-refserver"), "--format", "json", "--expect-tool", "nope"}, 1, `"failures": 1`, ""},
		{"junit file", []string{fixture("gosdk-refserver"), "--format", "junit", "-o", junit}, 0, "", "wrote " + junit},
		{"several tapes", []string{fixture("everything-stdio"), fixture("gosdk-http"), "--expect-tool", "echo"}, 0, "2 tapes, 2 sessions", ""},
		{"unreadable tape", []string{notTape, fixture("everything-stdio")}, 2, "ERROR " + notTape + ": not a tape", "notes.txt"},
		{"unreadable tape: not ok", []string{notTape, fixture("everything-stdio")}, 2, "check ERROR: 2 tapes, 1 session, ", ""},
		{"unreadable tape: counted", []string{notTape, fixture("everything-stdio")}, 2, " 0 notes, 1 tape unreadable\n", ""},
		{"no tape", []string{}, 2, "", "no tape given"},
		{"bad signal", []string{fixture("cut"), "--fail-on", "oops"}, 2, "", `mcptape check: --fail-on "oops": unknown signal "oops"`},
		{"bad threshold", []string{fixture("cut"), "--threshold", "p99<1s"}, 2, "", `mcptape check: --threshold "p99<1s": want SERIES:STAT`},
		{"bad max duration", []string{fixture("cut"), "--max-duration", "x"}, 2, "", `mcptape check: --max-duration "x": "x" is not a positive duration`},
		{"bad format", []string{fixture("cut"), "--format", "xml"}, 2, "", "--format"},
		{"bad baseline", []string{fixture("cut"), "--baseline", notTape}, 2, "", "--baseline"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", append([]string{"check"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, stdout, stderr)
			}
			if !strings.Contains(stdout, tt.stdout) || !strings.Contains(stderr, tt.stderr) {
				t.Errorf("stdout %q, stderr %q; want %q and %q", stdout, stderr, tt.stdout, tt.stderr)
			}
		})
	}
	fi, err := os.Stat(junit)
	if err != nil || !privateMode(fi) {
		t.Fatalf("junit file: %v %v", fi, err)
	}
}

// TestBaselineAndSurfaceDiff: a baseline from a real tape, then diff
// --surface and check --baseline against the same server, and against a
// baseline that has one tool more (the tape "removed" it: breaking).
func TestBaselineAndSurfaceDiff(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "surface.json")
	if code, _, stderr := runCLI(t, "", "baseline", fixture("everything-http"), "-o", base); code != 0 || !strings.Contains(stderr, "13 tools; never listed (unknown): prompts, resources, templates\n") {
		t.Fatalf("baseline: exit %d, %s", code, stderr)
	}
	data, err := os.ReadFile(base)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	s["tools"] = append(s["tools"].([]any), map[string]any{"name": "zz-gone", "definition": map[string]any{"name": "zz-gone"}})
	more, _ := json.Marshal(s)
	gone := filepath.Join(dir, "more.json")
	if err := os.WriteFile(gone, more, 0o600); err != nil {
		t.Fatal(err)
	}
	promptsOnly := filepath.Join(dir, "prompts-only.json")
	if err := os.WriteFile(promptsOnly, []byte(`{"format":1,"listed":["prompt"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
	}{
		{"same server", []string{"diff", "--surface", base, fixture("everything-stdio")}, 0, "surfaces are equal"},
		{"a kind listed on one side", []string{"diff", "--surface", base, promptsOnly}, 0,
			"surfaces are equal in what both list; not compared (listed on one side only): tool, prompt\n"},
		{"json names what was not compared", []string{"diff", "--surface", "--format", "json", base, promptsOnly}, 0, `"not_compared": [
    "tool",
    "prompt"
  ]`},
		{"check notes what was not compared", []string{"check", "--baseline", base, fixture("gosdk-everything")}, 0,
			"note  drift                        " + fixture("gosdk-everything") + ": the surface matches the baseline in what both list\n" +
				"        not compared (listed on one side only): tool, prompt\n"},
		{"tape against tape", []string{"diff", "--surface", fixture("everything-stdio"), fixture("everything-http")}, 0, "surfaces are equal"},
		{"removed tool", []string{"diff", "--surface", gone, fixture("everything-stdio")}, 1, "BREAKING tool zz-gone removed"},
		{"added tool", []string{"diff", "--surface", fixture("everything-stdio"), gone}, 0, "tool zz-gone added"},
		{"json", []string{"diff", "--surface", "--format", "json", gone, fixture("everything-stdio")}, 1, `"breaking": true`},
		{"check baseline", []string{"check", "--baseline", base, fixture("everything-stdio")}, 0, "check ok"},
		{"check drift", []string{"check", "--baseline", gone, fixture("everything-stdio")}, 1, "FAIL  drift"},
		{"baseline needs -o", []string{"baseline", fixture("everything-stdio")}, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", tt.args...)
			if code != tt.code || !strings.Contains(stdout, tt.stdout) {
				t.Errorf("exit %d (want %d), stdout %q (want %q), stderr %q", code, tt.code, stdout, tt.stdout, stderr)
			}
		})
	}
}

// TestCheckRotatedRecording: check reads a directory's tapes as inspect
// does, and the tapes of one rotated recording (a directory's, or given
// one by one) as one joined tape: a request whose answer came after the
// rotation is answered, one verdict under one name. Checked alone, the
// first tape has the request unanswered (exit 1); "check DIR" said "is a
// directory" (exit 2).
func TestCheckRotatedRecording(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	segs := tapetest.WriteRotated(t, filepath.Join(dir, "api.jsonl.zst"), tape.Header{Version: "test", Transport: "stdio"},
		tapetest.Messages("s1", now,
			`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"s","version":"1"}}}`,
			`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`> {"jsonrpc":"2.0","id":2,"method":"ping"}`),
		tapetest.Messages("s1", now.Add(time.Second), `< {"jsonrpc":"2.0","id":2,"result":{}}`)) // the answer after the rotation
	first, second := segs[0], segs[1]
	_, inspected, _ := runCLI(t, "", "inspect", "--format", "json", dir)
	var rep struct{ File string }
	if err := json.Unmarshal([]byte(inspected), &rep); err != nil || rep.File != joinedName([]string{first, second}) {
		t.Fatalf("inspect DIR: %v, file %q: want the joined name", err, rep.File)
	}
	for _, tt := range []struct {
		name  string
		args  []string
		code  int
		tapes []string // in the JSON result
	}{
		{"the directory", []string{dir}, 0, []string{rep.File}},
		{"its tapes", []string{first, second}, 0, []string{rep.File}},
		{"the first tape alone", []string{first}, 1, []string{first}},
		{"the directory and another tape", []string{dir, fixture("everything-stdio")}, 0, []string{rep.File, fixture("everything-stdio")}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", append([]string{"check", "--format", "json"}, tt.args...)...)
			var res struct{ Tapes []string }
			if err := json.Unmarshal([]byte(stdout), &res); err != nil || code != tt.code || !slices.Equal(res.Tapes, tt.tapes) {
				t.Errorf("exit %d, tapes %q (%v), want %d and %q\nstderr: %s", code, res.Tapes, err, tt.code, tt.tapes, stderr)
			}
		})
	}
}
