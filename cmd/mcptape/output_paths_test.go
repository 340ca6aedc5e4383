package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// keptOutput stands, in the command lines of TestOutputPathsCheckedFirst,
// for another output of the same run: an existing file that the usage
// error must leave as it was.
const keptOutput = "KEPT"

// outputCases are the output flags of every command (outputFlag), each
// with a command line that gets as far as creating its outputs when the
// path is good: args without the flag, keptOutput standing for another
// output of the run. A server command after "--" is never started.
func outputCases(tp, url string, server []string) []struct {
	cmd, flag string
	args      []string
} {
	load := []string{"load", "--url", url, "--call", "ping", "--requests", "1"}
	return []struct {
		cmd, flag string
		args      []string
	}{
		{"load", "json", append(load, "--hlog", keptOutput)},
		{"load", "results", append(load, "--json", keptOutput)},
		{"load", "hlog", append(load, "--json", keptOutput)},
		{"load", "cpuprofile", append(load, "--json", keptOutput)},
		{"load", "hgrm", append(load, "--json", keptOutput)},
		{"load", "server-stderr", slices.Concat([]string{"load", "--call", "ping", "--requests", "1", "--json", keptOutput}, server)},
		{"report merge", "json", []string{"report", "merge", "a.json"}},
		{"report merge", "hgrm", []string{"report", "merge", "a.json", "--json", keptOutput}},
		{"replay", "output", slices.Concat([]string{"replay", tp, "--server-stderr", keptOutput}, server)},
		{"replay", "server-stderr", slices.Concat([]string{"replay", tp, "--force", "-o", keptOutput}, server)},
		{"mock", "output", []string{"mock", tp}},
		{"record", "output", slices.Concat([]string{"record"}, server)},
		{"export", "output", []string{"export", tp, "--format", "ndjson"}},
		{"report", "output", []string{"report", tp}},
		{"check", "output", []string{"check", tp}},
		{"baseline", "output", []string{"baseline", tp}},
	}
}

// TestOutputPathsCheckedFirst: every output path of every command is
// checked as the flags are read, through one helper (checkOutputs), before
// anything runs: a file in a directory that does not exist or is a file,
// a directory where a file is wanted, a directory (--hgrm) under a
// file, a file or directory where nothing can be written ("load --json"
// into a read-only directory ran the whole load, then failed with exit 1),
// or an empty path (-o "": not stdout, not the default), is a usage
// error (exit 2, one line naming the flag and the path),
// and no other output of the run is created or truncated: "load --json
// ok.json --hlog nodir/x" emptied ok.json, then failed.
func TestOutputPathsCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	server := []string{"--", filepath.Join(dir, "no-such-server")}
	ro, roFile := unwritableDir(t), unwritableFile(t)
	for _, c := range outputCases(basicTape, "http://127.0.0.1:1/mcp", server) {
		var cmd *command
		for _, cc := range allCommands() {
			if cc.name == c.cmd {
				cmd = cc
			}
		}
		fs, _ := cmd.flagSet()
		fl := fs.Lookup(c.flag)
		name := "--" + fl.Name
		if fl.Shorthand != "" {
			name = "-" + fl.Shorthand
		}
		type badPath struct{ label, path, want string } // want: what the error says
		bad := []badPath{
			{"missing directory", filepath.Join(dir, "nodir", "x.csv"), "no directory " + filepath.Join(dir, "nodir")},
			{"file as directory", filepath.Join(file, "x.csv"), file + " is not a directory"},
			{"a directory", dir, "is a directory"},
		}
		if ro != "" {
			bad = append(bad, badPath{"directory not writable", filepath.Join(ro, "x.csv"), "cannot write in " + ro + ": "})
		}
		if roFile != "" {
			bad = append(bad, badPath{"file not writable", roFile, "cannot write it: "})
		}
		if fl.Annotations[outputAnnotation][0] == "dir" { // made with its parents
			bad = []badPath{{"under a file", filepath.Join(file, "a", "b"), file + " is not a directory"}, {"a file", file, "not a directory"}}
			if ro != "" {
				bad = append(bad, badPath{"under a directory not writable", filepath.Join(ro, "a", "b"), "cannot write in " + ro + ": "})
			}
		}
		bad = append(bad, badPath{"empty", "", ""}) // an unset shell variable: no default, no stdout
		for _, b := range bad {
			path, want := b.path, name+" "+b.path+": "+b.want
			if path == "" {
				want = name + " is empty: want "
			}
			t.Run(c.cmd+" "+name+" "+b.label, func(t *testing.T) {
				const old = "an earlier run's output\n"
				args := slices.Clone(c.args)
				var kept string
				for i, a := range args {
					if a == keptOutput {
						kept = filepath.Join(t.TempDir(), "kept.json")
						if args[i-1] == "-o" && fs.ShorthandLookup("o").Annotations[outputAnnotation][0] == "tape" {
							kept = filepath.Join(filepath.Dir(kept), "kept.jsonl.zst") // a tape is named as one
						}
						args[i] = kept
					}
				}
				if kept == "" {
					kept = filepath.Join(t.TempDir(), "kept.json")
				}
				if err := os.WriteFile(kept, []byte(old), 0o600); err != nil {
					t.Fatal(err)
				}
				at := len(args)
				if i := slices.Index(args, "--"); i >= 0 {
					at = i
				}
				args = slices.Insert(args, at, name, path)
				code, _, stderr := runCLI(t, "", args...)
				if code != 2 || !strings.Contains(stderr, want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
					t.Errorf("%q: exit %d, stderr %q; want 2 and one line with %q", args, code, stderr, want)
				}
				if data, err := os.ReadFile(kept); err != nil || string(data) != old {
					t.Errorf("the other output after the usage error: %q, %v; want it as it was", data, err)
				}
			})
		}
	}
}

// TestOutputFlagsCovered: every flag that names a file or directory a
// command writes is marked as an output (outputFlag), and has its case in
// TestOutputPathsCheckedFirst; the flags of that kind left unmarked are
// the inputs listed here.
func TestOutputFlagsCovered(t *testing.T) {
	inputs := map[string]bool{"record cwd": true, "record tls-cert": true, "record tls-key": true, "load tape": true,
		"show dir": true, "check baseline": true, "wrap config": true, "unwrap config": true}
	tested := map[string]bool{}
	for _, c := range outputCases("", "", nil) {
		tested[c.cmd+" "+c.flag] = true
	}
	for _, c := range allCommands() {
		fs, _ := c.flagSet()
		fs.VisitAll(func(f *pflag.Flag) {
			key := c.name + " " + f.Name
			_, marked := f.Annotations[outputAnnotation]
			value, _ := pflag.UnquoteUsage(f)
			switch {
			case marked && !tested[key]:
				t.Errorf("%s: an output flag without a case in TestOutputPathsCheckedFirst", key)
			case !marked && tested[key]:
				t.Errorf("%s: tested as an output, not marked as one (outputFlag)", key)
			case !marked && !inputs[key] && slices.Contains([]string{"FILE", "DIR", "NEW_TAPE", "TAPE"}, value):
				t.Errorf("%s %s: a path flag neither marked as an output (outputFlag) nor listed as an input here", key, value)
			}
		})
	}
}

// unwritableDir returns a directory in which this process cannot create a
// file: a temporary one made read-only, or, where permissions do not stop
// this process (root), /sys of Linux; "" when there is none.
func unwritableDir(t *testing.T) string {
	ro := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(ro, 0o755) })
	for _, d := range []string{ro, "/sys"} {
		if f, err := os.CreateTemp(d, "probe"); err == nil {
			f.Close()
			os.Remove(f.Name())
		} else if fi, serr := os.Stat(d); serr == nil && fi.IsDir() {
			return d
		}
	}
	return ""
}

// unwritableFile returns an existing regular file that this process cannot
// open for writing: a temporary one made read-only, or, where permissions
// do not stop this process (root), a read-only attribute in /sys of Linux;
// "" when there is none.
func unwritableFile(t *testing.T) string {
	ro := filepath.Join(t.TempDir(), "ro.json")
	if err := os.WriteFile(ro, nil, 0o400); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{ro, "/sys/kernel/uevent_seqnum"} {
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		if f, err := os.OpenFile(p, os.O_WRONLY, 0); err == nil {
			f.Close()
		} else {
			return p
		}
	}
	return ""
}

// TestCheckOutputPathLeavesNothing: the probe that tells whether a new
// output can be written in its directory is removed at once, and an
// existing output is neither truncated nor changed by being checked.
func TestCheckOutputPathLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "old.json")
	if err := os.WriteFile(existing, []byte("kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		dir  bool
	}{{filepath.Join(dir, "new.json"), false}, {existing, false}, {filepath.Join(dir, "a", "b"), true}, {dir, true}} {
		if err := checkOutputPath("-o", c.path, c.dir); err != nil {
			t.Errorf("checkOutputPath(%s): %v", c.path, err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 || entries[0].Name() != "old.json" {
		t.Errorf("after the checks the directory holds %v (%v); want old.json alone", entries, err)
	}
	if data, err := os.ReadFile(existing); err != nil || string(data) != "kept" {
		t.Errorf("the existing output now holds %q, %v", data, err)
	}
}
