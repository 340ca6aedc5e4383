package main

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestNegativeDurations gives every duration flag of every command (and
// subcommand) a negative value: each is the same one-line usage error,
// exit 2, naming the flag and the value as given.
func TestNegativeDurations(t *testing.T) {
	var cmds []*command
	for _, c := range commands() {
		cmds = append(cmds, c)
		for _, sub := range c.subcommands {
			cmds = append(cmds, sub)
		}
	}
	n := 0
	for _, c := range cmds {
		fs, _ := c.flagSet()
		fs.VisitAll(func(f *pflag.Flag) {
			if f.Value.Type() != "duration" {
				return
			}
			n++
			args := append(strings.Fields(c.name), "--"+f.Name, "-1h")
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				code, stdout, stderr := runCLI(t, "", args...)
				want := `mcptape ` + c.name + `: invalid argument "-1h" for "--` + f.Name + `" flag: a duration must not be negative`
				if code != 2 || stdout != "" || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
					t.Errorf("exit %d, stdout %q, stderr %q; want 2 and one line starting %q", code, stdout, stderr, want)
				}
			})
		})
	}
	if n < 20 {
		t.Errorf("%d duration flags found, want the 20 or more of record, replay, mock, load, check, prune and serve", n)
	}
	// Zero and positive values still parse.
	if code, _, stderr := runCLI(t, "", "record", "--upstream", "http://127.0.0.1:1/mcp", "--rotate", "0s", "--keep", "0s", "--flush", "bogus"); code != 2 || !strings.Contains(stderr, `"bogus" for "--flush"`) {
		t.Errorf("zero durations: exit %d, stderr %q", code, stderr)
	}
}
