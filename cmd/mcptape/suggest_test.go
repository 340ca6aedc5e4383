package main

import (
	"strings"
	"testing"
)

// TestMistypedCommandLines: each typical mistake is one line on stderr
// that says what was wrong and what was probably meant, exit code 2, and
// nothing on stdout.
func TestMistypedCommandLines(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // the whole stderr
	}{
		{[]string{"inspct", "t.jsonl.zst"}, `mcptape: unknown command "inspct" (did you mean "inspect"? see 'mcptape --help')`},
		{[]string{"recrod"}, `mcptape: unknown command "recrod" (did you mean "record"? see 'mcptape --help')`},
		{[]string{"rec"}, `mcptape: unknown command "rec" (did you mean "record"? see 'mcptape --help')`},
		{[]string{"hlep"}, `mcptape: unknown command "hlep" (did you mean "help"? see 'mcptape --help')`},
		{[]string{"zzz"}, `mcptape: unknown command "zzz" (see 'mcptape --help')`},
		{[]string{"--sessions", "3", "load"}, `mcptape: unknown flag "--sessions": flags go after the command (mcptape COMMAND [FLAGS]; see 'mcptape --help')`},
		{[]string{"help", "nosuchtopic"}, `mcptape help: unknown help topic "nosuchtopic" (want a command or scenario; see 'mcptape --help')`},
		{[]string{"help", "scenari"}, `mcptape help: unknown help topic "scenari" (did you mean "scenario"? want a command or scenario; see 'mcptape --help')`},
		{[]string{"help", "replya"}, `mcptape help: unknown help topic "replya" (did you mean "replay"? want a command or scenario; see 'mcptape --help')`},
		{[]string{"load", "--sesions", "3"}, `mcptape load: unknown flag: --sesions (did you mean --sessions? see 'mcptape help load')`},
		{[]string{"load", "-sessions", "3"}, `mcptape load: unknown shorthand flag: 's' in -sessions (a long flag takes two dashes: --sessions; see 'mcptape help load')`},
		{[]string{"show", "--folow", "t.jsonl.zst"}, `mcptape show: unknown flag: --folow (did you mean --follow? see 'mcptape help show')`},
		{[]string{"mock", "--concurrency", "3", "t.jsonl.zst"}, `mcptape mock: unknown flag: --concurrency (--concurrency is a flag of replay; see 'mcptape help mock')`},
		{[]string{"inspect", "--url", "x", "t.jsonl.zst"}, `mcptape inspect: unknown flag: --url (--url is a flag of replay and load; see 'mcptape help inspect')`},
		{[]string{"version", "--json"}, `mcptape version: unknown flag: --json (--json is a flag of serve, load and report merge; see 'mcptape help version')`},
		{[]string{"inspect", "--nosuch", "t.jsonl.zst"}, `mcptape inspect: unknown flag: --nosuch (see 'mcptape help inspect')`},
		{[]string{"load", "-z"}, `mcptape load: unknown shorthand flag: 'z' in -z (see 'mcptape help load')`},
		{[]string{"load", "--url"}, `mcptape load: flag needs an argument: --url (see 'mcptape help load')`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := runCLI(t, "", tc.args...)
			if code != 2 || stdout != "" || stderr != tc.want+"\n" {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit 2, no stdout, stderr %q", code, stdout, stderr, tc.want)
			}
		})
	}
}

// TestHelpHelp: "mcptape help help" is the general help, as "mcptape help".
func TestHelpHelp(t *testing.T) {
	code, stdout, stderr := runCLI(t, "", "help", "help")
	_, want, _ := runCLI(t, "", "help")
	if code != 0 || stderr != "" || stdout != want {
		t.Errorf("exit %d, stderr %q, stdout %.80q; want exit 0 and the help", code, stderr, stdout)
	}
}

// TestNoArguments: "mcptape" alone is a usage error, as with go and git:
// a short usage on stderr (the usage line, every command with its summary,
// where the help is), not the whole help with its examples; exit 2,
// nothing on stdout.
func TestNoArguments(t *testing.T) {
	code, stdout, stderr := runCLI(t, "")
	_, help, _ := runCLI(t, "", "help")
	if code != 2 || stdout != "" {
		t.Fatalf("exit %d, stdout %q; want exit 2 and no stdout", code, stdout)
	}
	if !strings.HasPrefix(stderr, "Usage:\n  mcptape COMMAND") || strings.Contains(stderr, "Examples:") ||
		!strings.Contains(stderr, "'mcptape help'") || strings.Count(stderr, "\n") >= strings.Count(help, "\n")-5 {
		t.Errorf("stderr %q: want a short usage (no examples) that points to 'mcptape help'", stderr)
	}
	for _, c := range commands() {
		if !strings.Contains(stderr, "  "+c.name+" ") || !strings.Contains(stderr, c.summary) {
			t.Errorf("stderr lacks the command %s and its summary", c.name)
		}
	}
}

func TestNearest(t *testing.T) {
	names := []string{"inspect", "record", "replay", "report", "load", "show", "help", "serve"}
	for _, tc := range []struct{ name, want string }{
		{"inspect", "inspect"},
		{"inspcet", "inspect"}, // a swap of neighbours is one edit
		{"repaly", "replay"},
		{"reprot", "report"},
		{"lod", "load"},
		{"sho", "show"},     // one edit
		{"insp", "inspect"}, // the only name with this prefix
		{"re", ""},          // three names start with it, none is near
		{"xyz", ""},
		{"", ""},
	} {
		if got := nearest(tc.name, names); got != tc.want {
			t.Errorf("nearest(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"kitten", "sitting", 3},
		{"ab", "ba", 1}, {"record", "recrod", 1}, {"load", "lod", 1}, {"flaw", "lawn", 2},
	} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
