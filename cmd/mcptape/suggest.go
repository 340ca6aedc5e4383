package main

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// This file words the usage errors of a mistyped command line: the
// nearest command or flag ("did you mean ...?"), the commands a flag
// belongs to when it was given to another one, and a flag given before
// the command.

// nearest returns the candidate closest to name: one within an edit
// distance of about a third of name's length (at least 1, at most 2), or
// the only candidate that starts with name; "" when none is close.
func nearest(name string, candidates []string) string {
	if name == "" {
		return ""
	}
	limit := min(max(len(name)/3, 1), 2)
	best, bestDist := "", limit+1
	var prefixed []string
	for _, c := range candidates {
		if d := editDistance(name, c); d < bestDist {
			best, bestDist = c, d
		}
		if strings.HasPrefix(c, name) {
			prefixed = append(prefixed, c)
		}
	}
	if best == "" && len(prefixed) == 1 {
		best = prefixed[0]
	}
	return best
}

// editDistance is the Levenshtein distance of a and b (bytes), with a
// swap of two neighbours counted as one edit (optimal string alignment).
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// unknownCommand is the line for a first argument that names no command,
// or (help set) for what "mcptape help WHAT" was asked about: a flag
// given before the command, or the nearest command or topic when one is
// close.
func unknownCommand(name string, help bool) string {
	if strings.HasPrefix(name, "-") && !help {
		return fmt.Sprintf("mcptape: unknown flag %q: flags go after the command (mcptape COMMAND [FLAGS]; see 'mcptape --help')", name)
	}
	names := commandNames(completionModel()) // the commands and help
	if help {
		names = append(names, topicNames()...)
	}
	hint := ""
	if n := nearest(strings.TrimLeft(name, "-"), names); n != "" {
		hint = fmt.Sprintf("did you mean %q? ", n)
	}
	if help {
		return fmt.Sprintf("mcptape help: unknown help topic %q (%swant a command or %s; see 'mcptape --help')",
			name, hint, strings.Join(topicNames(), ", "))
	}
	return fmt.Sprintf("mcptape: unknown command %q (%ssee 'mcptape --help')", name, hint)
}

// topicNames returns the help topics that are not commands, sorted.
func topicNames() []string {
	var names []string
	for topic := range helpTopics {
		names = append(names, topic)
	}
	slices.Sort(names)
	return names
}

// flagHint returns what to put before "see 'mcptape help NAME'" in the
// usage error of pflag's error err about a flag c does not have: the
// nearest flag of c ("did you mean --sessions? "), a long flag given with
// one dash ("-sessions"), or the commands whose flag it is; "" when there
// is nothing to add or err is another error.
func flagHint(c *command, err error) string {
	var ne *pflag.NotExistError
	if !errors.As(err, &ne) {
		return ""
	}
	fs, _ := c.flagSet()
	var own []string
	fs.VisitAll(func(f *pflag.Flag) { own = append(own, f.Name) })
	if short := ne.GetSpecifiedShortnames(); short != "" {
		name, _, _ := strings.Cut(short, "=")
		if fs.Lookup(name) != nil {
			return fmt.Sprintf("a long flag takes two dashes: --%s; ", name)
		}
		return ""
	}
	name := ne.GetSpecifiedName()
	if n := nearest(name, own); n != "" {
		return fmt.Sprintf("did you mean --%s? ", n)
	}
	var others []string
	for _, o := range commands() {
		cands := []*command{o}
		for _, k := range slices.Sorted(maps.Keys(o.subcommands)) {
			cands = append(cands, o.subcommands[k]) // "report merge"
		}
		for _, oc := range cands {
			if oc.name == c.name {
				continue
			}
			if ofs, _ := oc.flagSet(); ofs.Lookup(name) != nil {
				others = append(others, oc.name)
			}
		}
	}
	switch len(others) {
	case 0:
		return ""
	case 1:
		return fmt.Sprintf("--%s is a flag of %s; ", name, others[0])
	}
	return fmt.Sprintf("--%s is a flag of %s and %s; ", name, strings.Join(others[:len(others)-1], ", "), others[len(others)-1])
}
