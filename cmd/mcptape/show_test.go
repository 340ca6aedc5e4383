package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestShowCommandErrors(t *testing.T) {
	tp := fixture("operations")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no tape", []string{"show"}, "no tape given"},
		{"stdin joined", []string{"show", tp, "-"}, "stdin is read alone"},
		{"bad dir", []string{"show", tp, "--dir", "up"}, `--dir "up"`},
		{"bad method", []string{"show", tp, "--method", "tools/[x"}, `mcptape show: --method "tools/[x": unterminated [`},
		{"bad grep", []string{"show", tp, "--grep", "("}, `mcptape show: --grep "(": error parsing regexp`},
		{"bad from", []string{"show", tp, "--from", "yesterday"}, `mcptape show: --from "yesterday": want`},
		{"window ends before it starts", []string{"show", tp, "--from", "5s", "--to", "1s"}, "time window from 5s to 1s ends before it starts"},
		{"times, window ends before it starts", []string{"show", tp, "--from", "2026-01-02T00:00:00Z", "--to", "2026-01-01T00:00:00Z"}, "ends before it starts"},
		{"offset and time, window ends before it starts", []string{"show", tp, "--from", "5s", "--to", "2000-01-01T00:00:00Z"},
			"mcptape show: time window from 5s to 2000-01-01T00:00:00Z ends before it starts (offsets count from the tape's start, 20"},
		{"time and offset, window ends before it starts", []string{"show", tp, "--from", "2099-01-01T00:00:00Z", "--to", "1s"},
			"mcptape show: time window from 2099-01-01T00:00:00Z to 1s ends before it starts (offsets count from the tape's start, 20"},
		{"follow, offset and time", []string{"show", "--follow", tp, "--from", "5s", "--to", "2000-01-01T00:00:00Z"},
			"mcptape show: time window from 5s to 2000-01-01T00:00:00Z ends before it starts"},
		{"follow, window ends before it starts", []string{"show", "--follow", tp, "--from", "5s", "--to", "1s"}, "ends before it starts"},
		{"bad format", []string{"show", tp, "--format", "yaml"}, `mcptape show: --format "yaml": want text, ndjson or raw`},
		{"not a tape", []string{"show", "show_test.go"}, "show_test.go: not a tape"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", tt.args...)
			if code != 2 || stdout != "" || !strings.Contains(stderr, tt.want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and one line with %q", code, stdout, stderr, tt.want)
			}
		})
	}
}

func TestShowCommandFormats(t *testing.T) {
	// raw, client side: exactly the golden frames.
	want, err := os.ReadFile(filepath.Join("..", "..", "testdata", "analysis", "everything-stdio.show-in.raw"))
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "", "show", fixture("everything-stdio"), "--dir", "in", "--format", "raw")
	if code != 0 || stdout != string(want) {
		t.Errorf("raw: exit %d, stderr %s\n got: %q\nwant: %q", code, stderr, stdout, want)
	}
	// ndjson: one object per line, filtered by method (responses too).
	code, stdout, _ = runCLI(t, "", "show", fixture("operations"), "--format", "ndjson", "--method", "tasks/*")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != 0 || len(lines) != 4 {
		t.Fatalf("ndjson: exit %d, %d lines:\n%s", code, len(lines), stdout)
	}
	for _, l := range lines {
		var m struct {
			Method  string          `json:"method"`
			Message json.RawMessage `json:"message"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil || !strings.HasPrefix(m.Method, "tasks/") || len(m.Message) == 0 {
			t.Errorf("line %s: %v", l, err)
		}
	}
	// text: a time window and a session.
	code, stdout, _ = runCLI(t, "", "show", fixture("operations"), "--session", "mrtr", "--from", "0.2", "--to", "+230ms")
	if code != 0 || strings.Count(stdout, "\n") != 3 || !strings.Contains(stdout, "input required: ask") {
		t.Errorf("text: exit %d:\n%s", code, stdout)
	}
	// A cut tape: what was readable, and a warning.
	code, _, stderr = runCLI(t, "", "show", fixture("cut"))
	if code != 0 || !strings.Contains(stderr, "warning: ") || !strings.Contains(stderr, "tape cut after 94 records") {
		t.Errorf("cut: exit %d, stderr %q", code, stderr)
	}
}
