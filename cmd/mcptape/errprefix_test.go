package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestErrorsSayEachPrefixOnce runs error paths of every command (those
// that fail before a process or a connection starts) and checks that no
// line of stderr (and of check's result) says one prefix twice in a row:
// "mcptape check: check: threshold" (the check package's error under the
// check command), or "ERROR t.jsonl.zst: t.jsonl.zst: not a tape" (a
// reader's error, which names its file, under the file's name).
func TestErrorsSayEachPrefixOnce(t *testing.T) {
	dir := t.TempDir()
	notTape := filepath.Join(dir, "notes.jsonl.zst")
	if err := os.WriteFile(notTape, []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.jsonl.zst")
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o700); err != nil {
		t.Fatal(err)
	}
	tape := fixture("operations")
	var cases [][]string
	for _, c := range commands() {
		cases = append(cases, []string{c.name, "--no-such-flag"})
	}
	for _, bad := range []string{missing, notTape, empty} {
		cases = append(cases,
			[]string{"inspect", bad}, []string{"show", bad}, []string{"export", "--format", "ndjson", bad},
			[]string{"report", "-o", filepath.Join(dir, "r.html"), bad}, []string{"check", bad},
			[]string{"baseline", "-o", "-", bad}, []string{"diff", tape, bad}, []string{"replay", bad, "--url", "http://127.0.0.1:1/mcp"},
			[]string{"mock", bad}, []string{"load", "--tape", bad, "--url", "http://127.0.0.1:1/mcp"},
			[]string{"report", "merge", bad})
	}
	cases = append(cases,
		[]string{"check", tape, "--threshold", "bogus"},
		[]string{"check", tape, "--max-duration", "bogus"},
		[]string{"check", tape, "--fail-on", "bogus"},
		[]string{"check", tape, "--slow", "-1s"},
		[]string{"check", tape, "--baseline", notTape},
		[]string{"check", tape, "-o", filepath.Join(missing, "x")},
		[]string{"replay", tape, "--session", "nope", "--url", "http://127.0.0.1:1/mcp"},
		[]string{"replay", tape, "--speed", "0", "--url", "http://127.0.0.1:1/mcp"},
		[]string{"mock", tape, "--session", "nope"},
		[]string{"show", tape, "--from", "bogus"},
		// A mixed window (an offset and an absolute time) is checked once
		// the tape's start is known.
		[]string{"show", tape, "--from", "2099-01-01T00:00:00Z", "--to", "1s"},
		[]string{"show", tape, "--from", "1s", "--to", "2000-01-01T00:00:00Z"},
		[]string{"mock", tape, "--speed", "0"},
		[]string{"mock", tape, "--match", "bogus"},
		[]string{"mock", tape, "--http", "bogus"},
		[]string{"load", "--tape", tape, "--session", "nope", "--url", "http://127.0.0.1:1/mcp"},
		[]string{"export", "--format", "bogus", tape},
		[]string{"prune", empty, "--older-than", "-1h"},
		[]string{"record", "--upstream", "ftp://x"},
		[]string{"serve", "--http", "bogus"},
		[]string{"completion", "bogus"},
	)
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", args...)
			if code == 0 {
				t.Fatalf("exit 0, want an error; stderr: %s", stderr)
			}
			if args[0] != "check" { // check's text result on stdout has ERROR lines
				stdout = ""
			}
			for _, line := range strings.Split(strings.TrimSpace(stdout+stderr), "\n") {
				if p := repeatedPrefix(line); p != "" {
					t.Errorf("%q says %q twice", line, p)
				}
				// mock and load read tapes with the replay package: its
				// prefix is not said under them either.
				if strings.HasPrefix(line, "mcptape "+args[0]+": replay: ") {
					t.Errorf("%q says the replay package's prefix", line)
				}
			}
		})
	}
}

// repeatedPrefix returns the prefix that line says twice, "" when none:
// "mcptape check: check: x" gives "check", "a: a: x" gives "a", and the
// command's name said again as a short prefix further on ("mcptape show:
// show t: analysis: show: x") gives the name.
func repeatedPrefix(line string) string {
	parts := strings.Split(line, ": ")
	for i := 0; i+1 < len(parts)-1; i++ { // the last part is not a prefix
		words := strings.Fields(parts[i])
		if len(words) > 0 && words[len(words)-1] == parts[i+1] {
			return parts[i+1]
		}
	}
	if name, ok := strings.CutPrefix(parts[0], "mcptape "); ok {
		for _, p := range parts[1 : len(parts)-1] {
			if words := strings.Fields(p); len(words) > 0 && len(words) <= 2 && words[0] == name {
				return name
			}
		}
	}
	return ""
}

func TestRepeatedPrefix(t *testing.T) {
	for line, want := range map[string]string{
		"mcptape check: check: threshold":                   "check",
		"ERROR t.jsonl.zst: t.jsonl.zst: read x":            "t.jsonl.zst",
		"mcptape check: t: read t: a directory":             "",
		"mcptape report: report":                            "",
		"mcptape show: --from: time":                        "",
		"mcptape show: show t: analysis: show: x":           "show",
		"mcptape show: show t: x":                           "show",
		"mcptape replay: replay of session \"s\" failed: x": "",
	} {
		if got := repeatedPrefix(line); got != want {
			t.Errorf("repeatedPrefix(%q) = %q, want %q", line, got, want)
		}
	}
}

// TestSubcommandErrorsNameIt: the error line of a subcommand names the
// subcommand ("mcptape report merge: ..."), not only its command, and
// says no prefix twice.
func TestSubcommandErrorsNameIt(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.json")
	for _, args := range [][]string{
		{"report", "merge", missing},
		{"report", "merge", "--no-such-flag"},
		{"report", "merge"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, _, stderr := runCLI(t, "", args...)
			line := strings.TrimSpace(stderr)
			if code == 0 || !strings.HasPrefix(line, "mcptape report merge: ") || repeatedPrefix(line) != "" || strings.Contains(line, ": report merge: ") {
				t.Errorf("exit %d, stderr %q; want an error line that starts with \"mcptape report merge: \" and says it once", code, line)
			}
		})
	}
}

// TestErrorLineKeepsControlCharactersOut: an error may quote a server's
// message or a tape's value; its control characters (C0 and C1) reach the
// terminal as marks.
func TestErrorLineKeepsControlCharactersOut(t *testing.T) {
	c := &command{name: "load", libs: []string{"loadgen"}}
	got := errorLine(c, errors.New("loadgen: server said \x1b]0;x\x07 and \u009b2J"))
	if want := "mcptape load: server said ·]0;x· and ·2J"; got != want {
		t.Errorf("errorLine = %q, want %q", got, want)
	}
}
