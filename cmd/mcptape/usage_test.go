package main

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// allCommands lists every command and subcommand.
func allCommands() []*command {
	var all []*command
	for _, c := range commands() {
		all = append(all, c)
		for _, s := range c.subcommands {
			all = append(all, s)
		}
	}
	return all
}

// TestUsageLines checks every command's help against its flags: each form
// of the usage line is a whole command line ("mcptape NAME ..."), every
// --flag a form names is a flag of its command (a form of a subcommand,
// such as "report merge", of the subcommand), and every flag of the
// command but the hidden ones is in its help text.
func TestUsageLines(t *testing.T) {
	flagRE := regexp.MustCompile(`--([a-z0-9][a-z0-9-]*)`)
	flagsOf := func(c *command) *pflag.FlagSet {
		fs := pflag.NewFlagSet(c.name, pflag.ContinueOnError)
		if c.setup != nil {
			c.setup(fs)
		}
		return fs
	}
	for _, c := range allCommands() {
		t.Run(c.name, func(t *testing.T) {
			fs := flagsOf(c)
			for _, form := range strings.Split(c.usage, "\n  mcptape ") {
				if !strings.HasPrefix(form, c.name) || strings.Contains(form, "| "+c.name+" ") {
					t.Errorf("usage form %q does not start with %q, or holds another form after a |: give each form a line", form, c.name)
				}
				ffs := fs
				for name, sub := range c.subcommands {
					if strings.HasPrefix(form, c.name+" "+name+" ") {
						ffs = flagsOf(sub)
					}
				}
				for _, m := range flagRE.FindAllStringSubmatch(form, -1) {
					if ffs.Lookup(m[1]) == nil {
						t.Errorf("usage form %q names --%s, which is no flag of it", form, m[1])
					}
				}
			}
			var help bytes.Buffer
			printCommandHelp(&help, c)
			fs.VisitAll(func(f *pflag.Flag) {
				if !f.Hidden && !strings.Contains(help.String(), "--"+f.Name) {
					t.Errorf("help of %s lacks --%s", c.name, f.Name)
				}
			})
		})
	}
}

// TestDiffUsage: diff's usage shows --surface as a command line of its
// own, and its wrong-arguments error names it.
func TestDiffUsage(t *testing.T) {
	if !strings.Contains(diffCmd().usage, "\n  mcptape diff --surface A B") {
		t.Errorf("diff usage %q lacks its --surface form", diffCmd().usage)
	}
	code, _, stderr := runCLI(t, "", "diff", "--surface", "a.jsonl.zst")
	if code != 2 || !strings.Contains(stderr, "got 1 argument (usage: mcptape diff A B [--ignore PATH ...], or mcptape diff --surface A B)") {
		t.Errorf("code %d, stderr %q", code, stderr)
	}
}

// TestLoadHelpGroups: load's help lists its flags in groups, in order
// (target, workload, model and rate, capacity search, duration, HTTP
// options, cancellation, server process, outputs, thresholds), each flag
// in its group; a new flag must be given one here.
func TestLoadHelpGroups(t *testing.T) {
	groups := [][]string{
		{"url", "sse", "protocol"},
		{"call", "scenario", "tape", "session", "speed", "unbatch", "batch", "progress"},
		{"sessions", "inflight", "think", "rate", "max-inflight", "ramp", "stage"},
		{"find-max", "step-duration", "warmup", "max-rate", "find-precision"},
		{"duration", "requests", "timeout"},
		{"header", "insecure", "ws-subprotocol", "get-stream", "stream-path", "max-conns"},
		{"cancel-after", "cancel-ratio"},
		{"server-stderr", "on-exit", "grace"},
		{"json", "results", "hgrm", "hlog", "hlog-interval", "every", "quiet"},
		{"threshold"},
	}
	group := map[string]int{}
	for i, g := range groups {
		for _, name := range g {
			group[name] = i
		}
	}
	var load *command
	for _, c := range commands() {
		if c.name == "load" {
			load = c
		}
	}
	if load == nil {
		t.Fatal("no load command")
	}
	flagLine := regexp.MustCompile(`(?m)^\s+(?:-\w, )?--([a-z0-9-]+)`)
	last, prev := 0, ""
	for _, m := range flagLine.FindAllStringSubmatch(load.flagUsage(), -1) {
		g, ok := group[m[1]]
		switch {
		case !ok:
			t.Errorf("--%s is in no group of this test: give it one", m[1])
		case g < last:
			t.Errorf("--%s (group %d, %q...) comes after --%s (group %d)", m[1], g, groups[g][0], prev, last)
		default:
			last, prev = g, m[1]
		}
	}
}
