package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/refserver"
)

func TestReportMergeUsage(t *testing.T) {
	var out strings.Builder
	st := &stdio{out: &out, err: &out}
	for _, args := range [][]string{nil, {"--json"}, {"nosuch.json"}, {"a.json", "--threshold", "bad"}} {
		err := reportMergeCmd().execute(t.Context(), st, args)
		if err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v", args, err)
		}
	}
}

// TestReportMergeNotAReport: a file that holds no load report (a tape
// given by mistake, JSON of something else), or such stdin, is named as
// not a load report; exit code 2.
func TestReportMergeNotAReport(t *testing.T) {
	dir := t.TempDir()
	tapeFile := filepath.Join(dir, "t.jsonl.zst")
	other := filepath.Join(dir, "other.json")
	os.WriteFile(tapeFile, []byte("(\xb5/\xfd not json"), 0o600)
	os.WriteFile(other, []byte(`{"format":7}`), 0o600)
	for _, tc := range []struct {
		args  []string
		stdin string
		want  string
	}{
		{[]string{"report", "merge", tapeFile}, "", tapeFile + ": not a load report (the JSON of mcptape load --json): loadgen: read report: invalid character"},
		{[]string{"report", "merge", other}, "", other + ": not a load report (the JSON of mcptape load --json): loadgen: read report: format 7"},
		{[]string{"report", "merge", "-"}, "hello", "stdin: not a load report (the JSON of mcptape load --json)"},
	} {
		code, out, errOut := runCLI(t, tc.stdin, tc.args...)
		if code != 2 || out != "" || !strings.HasPrefix(errOut, "mcptape report merge: "+tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 2 and one line starting %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

// TestReportRunsUnreadable: a file after a load report that cannot be
// read is named with why (exit 2), not called "not a load report".
func TestReportRunsUnreadable(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run.json")
	os.WriteFile(run, []byte(`{"model":"closed","series":[]}`), 0o600)
	missing := filepath.Join(dir, "nosuch.json")
	code, out, errOut := runCLI(t, "", "report", run, missing, "-o", filepath.Join(dir, "r.html"))
	want := "mcptape report: open " + missing + ": "
	if code != 2 || out != "" || !strings.HasPrefix(errOut, want) || strings.Count(errOut, "\n") != 1 {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line starting %q", code, out, errOut, want)
	}
}

// TestLoadExitCodes: a run where no session could be set up, or whose
// stdio server exits, exits 1 saying why; a bad URL is a usage error.
// TestReportLoadRuns draws load runs' JSON reports with "mcptape report":
// one run, two compared; a tape among runs is refused.
func TestReportLoadRuns(t *testing.T) {
	url := refURL(t, refserver.HTTPConfig{})
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	for _, out := range []string{a, b} {
		if code, stdout, stderr := runCLI(t, "", "load", "--url", url, "-q", "--stage", "300ms:50/s", "--stage", "300ms:0/s",
			"--hlog-interval", "100ms", "--call", "ping", "--json", out); code != 0 {
			t.Fatalf("load: %d\n%s\n%s", code, stdout, stderr)
		}
	}
	page := filepath.Join(dir, "load.html")
	if code, _, stderr := runCLI(t, "", "report", a, "-o", page); code != 0 {
		t.Fatalf("report: %d %s", code, stderr)
	}
	html, err := os.ReadFile(page)
	if err != nil || !strings.Contains(string(html), `id="throughput"`) || !strings.Contains(string(html), "stage 2: 50→0/s") {
		t.Fatalf("page: %v\n%.500s", err, html)
	}
	code, stdout, stderr := runCLI(t, "", "report", a, b, "-o", "-")
	if code != 0 || !strings.Contains(stdout, "Changes against a.json") {
		t.Errorf("compare: %d %s %.300s", code, stderr, stdout)
	}
	if code, _, stderr := runCLI(t, "", "report", a, "-o", a); code != 2 || !strings.Contains(stderr, "is the input") {
		t.Errorf("report onto its run: %d %s", code, stderr)
	}
	if !isLoadReport(a) {
		t.Errorf("report onto its run: %s overwritten", a)
	}
	tape := filepath.Join(dir, "not-a-run.jsonl")
	if err := os.WriteFile(tape, []byte(`{"type":"header"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, "", "report", a, tape, "-o", page); code != 2 || !strings.Contains(stderr, "not a load report") {
		t.Errorf("run and tape: %d %s", code, stderr)
	}
}

// TestLoadResults writes --results as CSV: a header and one line per
// request, in a 0600 file; an unknown extension is bad usage.
