package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// tableFlags lists, straight from the command table, every command's flag
// spellings: what the completion scripts must offer.
func tableFlags() map[string][]string {
	flags := map[string][]string{}
	for _, c := range commands() {
		flags[c.name] = commandFlags(c)
	}
	return flags
}

// subcommandFlags lists the flag spellings of every subcommand, by its
// whole name ("report merge").
func subcommandFlags() map[string][]string {
	flags := map[string][]string{}
	for _, c := range commands() {
		for _, sub := range c.subcommands {
			flags[sub.name] = commandFlags(sub)
		}
	}
	return flags
}

// commandFlags lists the visible flag spellings of c.
func commandFlags(c *command) []string {
	fs, _ := c.flagSet()
	names := []string{}
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden { // kept for developers (--cpuprofile), not offered
			return
		}
		names = append(names, "--"+f.Name)
		if f.Shorthand != "" {
			names = append(names, "-"+f.Shorthand)
		}
	})
	return names
}

// completion returns the script for shell, failing the test on an error.
func completion(t *testing.T, shell string) string {
	t.Helper()
	code, out, errOut := runCLI(t, "", "completion", shell)
	if code != 0 {
		t.Fatalf("completion %s: exit %d: %s", shell, code, errOut)
	}
	return out
}

// TestCompletionBash loads the bash script into bash and asks it, as the
// shell does on Tab, for the commands, for each command's flags after
// "-", for subcommands, and for nothing (file names) after a flag that
// takes a value and after "--".
func TestCompletionBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	script := filepath.Join(t.TempDir(), "mcptape.bash")
	if err := os.WriteFile(script, []byte(completion(t, "bash")), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := tableFlags()
	type ask struct {
		name  string
		words []string // the command line, the word being completed last
		want  []string
	}
	var asks []ask
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
		asks = append(asks, ask{c.name + " flags", []string{c.name, "-"}, flags[c.name]})
	}
	for name, fl := range subcommandFlags() {
		asks = append(asks, ask{name + " flags", append(strings.Fields(name), "-"), fl})
	}
	asks = append(asks,
		ask{"commands", []string{""}, append(names, "help")},
		ask{"subcommands", []string{"report", ""}, []string{"merge"}},
		ask{"help topics", []string{"help", ""}, append(slices.Clone(names), "scenario")},
		ask{"shells", []string{"completion", ""}, []string{"bash", "fish", "powershell", "zsh"}},
		ask{"flag value", []string{"record", "-o", ""}, nil},
		ask{"after --", []string{"record", "--", "server", "-"}, nil},
		ask{"prefix", []string{"re"}, []string{"record", "replay", "report"}},
	)
	var driver strings.Builder
	fmt.Fprintf(&driver, "source %q\n", script)
	for _, a := range asks {
		words := append([]string{"mcptape"}, a.words...)
		for i, w := range words {
			words[i] = fmt.Sprintf("%q", w)
		}
		fmt.Fprintf(&driver, "COMP_WORDS=(%s); COMP_CWORD=%d; _mcptape; echo \"${COMPREPLY[*]}\"\n", strings.Join(words, " "), len(a.words))
	}
	out, err := exec.Command(bash, "--norc", "-c", driver.String()).CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(asks) {
		t.Fatalf("bash printed %d lines for %d questions:\n%s", len(lines), len(asks), out)
	}
	for i, a := range asks {
		got := strings.Fields(lines[i])
		slices.Sort(got)
		want := slices.Clone(a.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s: completed %q, want %q", a.name, got, want)
		}
	}
}

// TestCompletionFish asks fish, as on Tab, for the flags of every command
// and of every subcommand: a subcommand offers its own flags, not its
// parent's.
func TestCompletionFish(t *testing.T) {
	fish, err := exec.LookPath("fish")
	if err != nil {
		t.Skip("no fish (make sysdeps installs it)")
	}
	script := filepath.Join(t.TempDir(), "mcptape.fish")
	if err := os.WriteFile(script, []byte(completion(t, "fish")), 0o600); err != nil {
		t.Fatal(err)
	}
	want := tableFlags()
	for name, fl := range subcommandFlags() {
		want[name] = fl
	}
	var lines []string
	var driver strings.Builder
	fmt.Fprintf(&driver, "source %q\n", script)
	for name := range want {
		lines = append(lines, name)
	}
	slices.Sort(lines)
	for _, name := range lines {
		fmt.Fprintf(&driver, "echo (complete -C 'mcptape %s --' | string replace -r '\\t.*' '')\n", name)
	}
	out, err := exec.Command(fish, "--no-config", "-c", driver.String()).CombinedOutput()
	if err != nil {
		t.Fatalf("fish: %v\n%s", err, out)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(got) != len(lines) {
		t.Fatalf("fish printed %d lines for %d commands:\n%s", len(got), len(lines), out)
	}
	for i, name := range lines {
		var long []string // fish completes "--" with the long flags only
		for _, f := range want[name] {
			if strings.HasPrefix(f, "--") {
				long = append(long, f)
			}
		}
		g := strings.Fields(got[i])
		slices.Sort(g)
		slices.Sort(long)
		if !slices.Equal(g, long) {
			t.Errorf("%s: fish completed %q, want %q", name, g, long)
		}
	}
}

// TestCompletionScripts: every script names every command and every flag
// of it, and the shells that are installed find no syntax error in it.
func TestCompletionScripts(t *testing.T) {
	flags := tableFlags()
	shortOf := map[string]string{} // command+long flag: its short form
	for _, c := range commands() {
		fs, _ := c.flagSet()
		fs.VisitAll(func(f *pflag.Flag) {
			if f.Shorthand != "" {
				shortOf[c.name+"--"+f.Name] = "-" + f.Shorthand
			}
		})
	}
	tests := []struct {
		shell string
		check []string // a syntax check: program and flags, the script's path last
		has   func(cmd, flag string) string
	}{
		{"bash", []string{"bash", "-n"}, func(c, _ string) string { return c + ") flags='" }}, // the rest: TestCompletionBash
		{"zsh", []string{"zsh", "-n"}, func(c, f string) string {
			switch {
			case !strings.HasPrefix(f, "--"):
				return "{" + f + ","
			case strings.Contains(shortOf[c+f], "-"):
				return "," + f + "}"
			}
			return "'" + f + "["
		}},
		{"fish", []string{"fish", "--no-execute"}, func(_, f string) string { // per command: TestCompletionFish
			if strings.HasPrefix(f, "--") {
				return " -l " + f[2:]
			}
			return " -s " + f[1:]
		}},
		{"powershell", nil, func(_, f string) string { return "'" + f + "'" }},
	}
	for _, tt := range tests {
		t.Run(tt.shell, func(t *testing.T) {
			script := completion(t, tt.shell)
			for cmd, fs := range flags {
				if !strings.Contains(script, cmd) {
					t.Errorf("command %s missing", cmd)
				}
				for _, f := range fs {
					if !strings.Contains(script, tt.has(cmd, f)) {
						t.Errorf("%s: flag %s missing (looked for %q)", cmd, f, tt.has(cmd, f))
					}
				}
			}
			if tt.check == nil {
				return // no PowerShell here: its script is checked by content only
			}
			if _, err := exec.LookPath(tt.check[0]); err != nil {
				t.Skipf("no %s to check the syntax (make sysdeps installs it)", tt.check[0])
			}
			path := filepath.Join(t.TempDir(), "completion")
			if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(tt.check[0], append(tt.check[1:], path)...).CombinedOutput(); err != nil {
				t.Errorf("%s finds the script wrong: %v\n%s", tt.shell, err, out)
			}
		})
	}
}

func TestCompletionUsage(t *testing.T) {
	for _, args := range [][]string{{"completion"}, {"completion", "tcsh"}, {"completion", "bash", "zsh"}} {
		code, _, errOut := runCLI(t, "", args...)
		if code != 2 || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%q: exit %d, stderr %q; want a one-line usage error, exit 2", args, code, errOut)
		}
	}
}

// TestModuleVersion: without -ldflags, the version is the one "go
// install ...@VERSION" records; a build from a checkout has none.
func TestModuleVersion(t *testing.T) {
	tests := []struct {
		main string
		ok   bool
		want string
	}{
		{"v1.2.3", true, "v1.2.3"},
		{"v0.0.0-20261201150000-0123456789ab+dirty", true, "v0.0.0-20261201150000-0123456789ab+dirty"},
		{"(devel)", true, devVersion},
		{"", true, devVersion},
		{"v1.2.3", false, devVersion},
	}
	for _, tt := range tests {
		info := &debug.BuildInfo{Main: debug.Module{Path: "github.com/mcptape/mcptape", Version: tt.main}}
		if got := moduleVersion(info, tt.ok); got != tt.want {
			t.Errorf("moduleVersion(%q, %v) = %q, want %q", tt.main, tt.ok, got, tt.want)
		}
	}
	code, out, _ := runCLI(t, "", "version")
	if code != 0 || out != "mcptape "+version+"\n" || version == "" {
		t.Errorf("version: exit %d, %q (version %q)", code, out, version)
	}
}
