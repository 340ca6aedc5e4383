package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
)

// fixture is a tape of testdata/analysis.
func fixture(name string) string {
	return filepath.Join("..", "..", "testdata", "analysis", name+".jsonl.zst")
}

func TestInspectCommand(t *testing.T) {
	dir := t.TempDir()
	notTape := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notTape, []byte("just text\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		args       []string
		code       int
		stdout     string // in stdout
		stderr     string // in stderr ("" means empty)
		stderrRows int
	}{
		{"no tape", []string{"inspect"}, 2, "", "no tape given", 1},
		{"bad format", []string{"inspect", "--format", "xml", fixture("operations")}, 2, "", `--format "xml"`, 1},
		{"bad max sessions", []string{"inspect", "--max-sessions", "0", fixture("operations")}, 2, "", "--max-sessions 0", 1},
		{"follow and merge", []string{"inspect", "--follow", "--merge", fixture("operations")}, 2, "", "--follow and --merge cannot be combined", 1},
		{"follow stdin", []string{"inspect", "--follow", "-"}, 2, "", "--follow needs a file, not stdin", 1},
		{"follow two tapes", []string{"inspect", "--follow", fixture("operations"), fixture("cut")}, 2, "", "--follow takes one tape file", 1},
		{"not a tape", []string{"inspect", notTape}, 2, "", notTape + ": not a tape: not zstd data", 1},
		{"missing file", []string{"inspect", filepath.Join(dir, "nope.jsonl.zst")}, 2, "", "no such file", 1},
		{"text", []string{"inspect", fixture("operations")}, 0, "PROBLEMS  (worst first; +1.234s: time since the tape started)", "", 0},
		{"a bad tape does not stop the others", []string{"inspect", notTape, fixture("operations")}, 2, "TAPE  " + fixture("operations"), "not a tape", 1},
		{"cut tape", []string{"inspect", fixture("cut")}, 0, "tape cut after 94 records", "warning: tape cut after 94 records", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", tt.args...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d; stderr: %s", code, tt.code, stderr)
			}
			if !strings.Contains(stdout, tt.stdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.stdout, stdout)
			}
			if !strings.Contains(stderr, tt.stderr) || strings.Count(stderr, "\n") != tt.stderrRows {
				t.Errorf("stderr %q, want %d line(s) with %q", stderr, tt.stderrRows, tt.stderr)
			}
		})
	}
}

func TestInspectCommandJSONAndStdin(t *testing.T) {
	data, err := os.ReadFile(fixture("gosdk-refserver"))
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, string(data), "inspect", "--format", "json", "-", fixture("operations"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	var files []string
	for dec.More() {
		var rep struct {
			File     string `json:"file"`
			Sessions []struct {
				ProtocolVersion string `json:"protocol_version"`
			} `json:"sessions"`
		}
		if err := dec.Decode(&rep); err != nil {
			t.Fatal(err)
		}
		files = append(files, rep.File)
		if len(rep.Sessions) == 0 || rep.Sessions[0].ProtocolVersion == "" {
			t.Errorf("%s: sessions %+v", rep.File, rep.Sessions)
		}
	}
	if strings.Join(files, ",") != "-,"+fixture("operations") {
		t.Errorf("reports for %v", files)
	}
}

// TestInspectCatJoinedTapes: tapes joined with cat (zstd frames
// concatenate), as a file or on stdin, are inspected as the tapes are one
// by one: the same rule violations, and a session per recorded session.
// The ids that restart in the second tape were taken for ids reused in
// one session ("id-reused-after-answer").
func TestInspectCatJoinedTapes(t *testing.T) {
	type report struct {
		Violations []struct {
			Rule  string `json:"rule"`
			Count int    `json:"count"`
		} `json:"violations"`
		Sessions []struct {
			ID string `json:"id"`
		} `json:"sessions"`
	}
	inspect := func(stdin []byte, args ...string) report {
		t.Helper()
		code, stdout, stderr := runCLI(t, string(stdin), append([]string{"inspect", "--format", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("inspect %v: exit %d: %s", args, code, stderr)
		}
		var rep report
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatalf("inspect %v: %v", args, err)
		}
		return rep
	}
	for _, pair := range [][2]string{
		{"everything-stdio", "gosdk-everything"},
		{"operations-http", "violations-http"},
	} {
		want := map[string]int{} // rule: count, of the tapes alone
		sessions := 0
		for _, name := range pair {
			rep := inspect(nil, fixture(name))
			for _, v := range rep.Violations {
				want[v.Rule] += v.Count
			}
			sessions += len(rep.Sessions)
		}
		path := peertest.Cat(t, fixture(pair[0]), fixture(pair[1]))
		cat, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name  string
			stdin []byte
			arg   string
		}{{"file", nil, path}, {"stdin", cat, "-"}} {
			t.Run(pair[0]+"+"+pair[1]+"/"+tc.name, func(t *testing.T) {
				rep := inspect(tc.stdin, tc.arg)
				got := map[string]int{}
				for _, v := range rep.Violations {
					got[v.Rule] += v.Count
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("violations %v, want the tapes' own %v", got, want)
				}
				if len(rep.Sessions) != sessions {
					t.Errorf("%d sessions, want %d", len(rep.Sessions), sessions)
				}
			})
		}
	}
}
