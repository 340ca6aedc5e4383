package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputFormatFollowsName: the -o of report, export, baseline and
// check is written in the format its extension names, or refused: report
// -o r.pdf wrote HTML into r.pdf, check -o check.xml wrote text. A format
// given by --format (export, check) must fit the extension; check without
// --format takes the extension's (.xml junit, .json json, .txt text); an
// extension no format has, or one that contradicts the format, is a usage
// error (exit 2, one line naming the name, the extensions and what the
// command writes) and no file is written. A name without an extension
// takes the command's format, as before.
func TestOutputFormatFollowsName(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run.json")
	if err := os.WriteFile(run, []byte(`{"model":"closed","series":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	stdio := filepath.Join(exportFixtures, "stdio.jsonl.zst")
	for _, c := range []struct {
		args   []string // -o NAME is added
		name   string
		err    string // "" when written; then prefix starts the file
		prefix string
	}{
		{args: []string{"report", basicTape}, name: "r.pdf", err: `-o: "r.pdf": want a name ending in .html or .htm (report writes HTML)`},
		{args: []string{"report", run}, name: "load.png", err: `-o: "load.png": want a name ending in .html or .htm (report writes HTML)`},
		{args: []string{"report", basicTape}, name: "r.HTML", prefix: "<!DOCTYPE html>"},
		{args: []string{"report", basicTape}, name: "report", prefix: "<!DOCTYPE html>"},
		{args: []string{"export", stdio, "--format", "otlp"}, name: "trace.csv", err: `-o: "trace.csv": want a name ending in .json (--format otlp writes OTLP/JSON)`},
		{args: []string{"export", stdio, "--format", "har"}, name: "t.ndjson", err: `-o: "t.ndjson": want a name ending in .har or .json (--format har writes HAR (JSON))`},
		{args: []string{"export", stdio, "--format", "ndjson"}, name: "m.parquet", err: `-o: "m.parquet": want a name ending in .ndjson, .jsonl or .json (--format ndjson writes JSON lines)`},
		{args: []string{"export", stdio, "--format", "ndjson"}, name: "m.jsonl", prefix: "{"},
		{args: []string{"baseline", basicTape}, name: "surface.yaml", err: `-o: "surface.yaml": want a name ending in .json (baseline writes JSON)`},
		{args: []string{"baseline", basicTape}, name: "surface.json", prefix: "{"},
		{args: []string{"check", basicTape}, name: "check.xml", prefix: "<?xml"},
		{args: []string{"check", basicTape}, name: "check.json", prefix: "{"},
		{args: []string{"check", basicTape}, name: "check.txt", prefix: "check ok"},
		{args: []string{"check", basicTape}, name: "check", prefix: "check ok"},
		{args: []string{"check", basicTape, "--format", "json"}, name: "check", prefix: "{"},
		{args: []string{"check", basicTape}, name: "check.pdf", err: `-o: "check.pdf": want a name ending in .txt, .json or .xml (for text, json or junit; or give --format)`},
		{args: []string{"check", basicTape, "--format", "junit"}, name: "check.json", err: `-o: "check.json": want a name ending in .xml (--format junit writes JUnit XML)`},
		{args: []string{"check", basicTape, "--format", "text"}, name: "check.xml", err: `-o: "check.xml": want a name ending in .txt (--format text writes text)`},
	} {
		t.Run(strings.Join(c.args[:1], " ")+" "+c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), c.name)
			args := append(c.args, "-o", out)
			code, _, stderr := runCLI(t, "", args...)
			data, rerr := os.ReadFile(out)
			if c.err != "" {
				want := "mcptape " + c.args[0] + ": " + strings.Replace(c.err, `"`+c.name+`"`, `"`+out+`"`, 1) + "\n"
				if code != 2 || stderr != want {
					t.Errorf("%q: exit %d, stderr %q; want 2 and %q", args, code, stderr, want)
				}
				if rerr == nil {
					t.Errorf("%s written after the usage error", out)
				}
				return
			}
			if code != 0 || rerr != nil || !strings.HasPrefix(strings.TrimSpace(string(data)), c.prefix) {
				t.Errorf("%q: exit %d (%s), %s starts %.40q, %v; want exit 0 and it to start %q", args, code, stderr, out, data, rerr, c.prefix)
			}
		})
	}
}
