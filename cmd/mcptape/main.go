// Command mcptape records, replays, load-tests and inspects the traffic of
// Model Context Protocol servers.
//
// Every subcommand is a thin flag layer (one file per subcommand) over an
// importable package. Data goes to stdout, logs and progress to stderr; only
// main exits.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mcptape/mcptape/internal/termsafe"
)

// version is the tool version: set at link time with -ldflags
// "-X main.version=...", else the module version that "go install
// ...@VERSION" records in the binary (version.go).
var version string

// command is one subcommand: its name, help text and entry point.
type command struct {
	name     string
	summary  string // one line, shown in the command list
	usage    string // synopsis after "mcptape "
	examples string // shown by "mcptape help NAME"
	// setup declares the command's flags on fs and returns the function
	// that runs the command once fs has been parsed. The run function
	// receives the positional arguments (fs.Args()); it may capture fs to
	// ask for more, such as fs.ArgsLenAtDash().
	setup func(fs *pflag.FlagSet) runFunc
	// subcommands, when set, take over when the first argument names one
	// of them (the map's key): the subcommand parses the remaining
	// arguments with its own flags ("mcptape report merge ..."). Its name
	// is the whole phrase ("report merge").
	subcommands map[string]*command
	// libs names the packages besides the one named like the command
	// whose "PKG: " prefix the error line drops (mock and load read tapes
	// with the replay package).
	libs []string
}

// runFunc runs a command with its positional arguments.
type runFunc func(ctx context.Context, st *stdio, args []string) error

// stdio bundles the streams a command may use, so tests can run commands
// in-process.
type stdio struct {
	in       io.Reader
	out, err io.Writer
	cmd      string // the command running ("inspect", "report merge"), for its notes on err
}

// exitError carries a process exit code with the error that caused it.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// withCode wraps err so that main exits with code.
func withCode(code int, err error) error { return &exitError{code: code, err: err} }

// usageError marks a wrong invocation (exit code 2).
func usageError(format string, a ...any) error {
	return withCode(2, fmt.Errorf(format, a...))
}

// commands lists every subcommand, in the order help shows them.
func commands() []*command {
	return []*command{
		versionCmd(),
		serveCmd(),
		recordCmd(),
		replayCmd(),
		mockCmd(),
		loadCmd(),
		inspectCmd(),
		showCmd(),
		diffCmd(),
		exportCmd(),
		reportCmd(),
		checkCmd(),
		baselineCmd(),
		pruneCmd(),
		wrapCmd(),
		unwrapCmd(),
		completionCmd(),
	}
}

func findCommand(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return c
		}
	}
	return nil
}

func main() {
	ctx, stop := notifyShutdown(context.Background()) // signals.go
	defer stop()
	code := run(ctx, &stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr}, os.Args[1:])
	os.Exit(code)
}

// run dispatches args to a subcommand and returns the process exit code.
func run(ctx context.Context, st *stdio, args []string) int {
	if len(args) == 0 { // as go and git do: what there is, where help is, exit 2
		printUsage(st.err)
		fmt.Fprint(st.err, "\nRun 'mcptape help' for examples, 'mcptape help COMMAND' for a command's flags.\n")
		return 2
	}
	name := args[0]
	switch name {
	case "-h", "--help", "help":
		if len(args) > 1 && name == "help" {
			if text, ok := helpTopics[args[1]]; ok {
				fmt.Fprint(st.out, text)
				return 0
			}
			if args[1] == "help" {
				printHelp(st.out)
				return 0
			}
			c := findCommand(args[1])
			if c == nil {
				fmt.Fprintln(st.err, unknownCommand(args[1], true))
				return 2
			}
			if len(args) > 2 && c.subcommands[args[2]] != nil {
				c = c.subcommands[args[2]]
			}
			printCommandHelp(st.out, c)
			return 0
		}
		printHelp(st.out)
		return 0
	case "-v", "--version":
		name = "version"
	}
	c := findCommand(name)
	if c == nil {
		fmt.Fprintln(st.err, unknownCommand(name, false))
		return 2
	}
	err := c.execute(ctx, st, args[1:])
	if err == nil {
		return 0
	}
	code := 1
	var ee *exitError
	if errors.Is(err, errHelp) {
		return 0
	}
	if errors.As(err, &ee) {
		code = ee.code
		if ee.err == nil {
			return code
		}
	}
	sub, _ := c.resolve(args[1:]) // "mcptape report merge: ...", not "mcptape report: ..."
	fmt.Fprintln(st.err, errorLine(sub, err))
	return code
}

// errorLine is the line that reports a command's error: "mcptape NAME:
// what". An error of the package the command is named after (check,
// replay, mock) starts with "NAME: " already: it is not said twice; nor is
// the prefix of a package in c.libs (one prefix dropped at most).
func errorLine(c *command, err error) string {
	msg := err.Error()
	for _, p := range append([]string{c.name}, c.libs...) {
		if rest, ok := strings.CutPrefix(msg, p+": "); ok {
			msg = rest
			break
		}
	}
	// An error may quote a server's message or a tape's value: its
	// control characters stay text.
	return "mcptape " + c.name + ": " + termsafe.String(msg)
}

// printUsage writes the usage line and the commands, each with its
// summary: what "mcptape" with no arguments prints.
func printUsage(w io.Writer) {
	fmt.Fprint(w, `Usage:
  mcptape COMMAND [FLAGS] [ARGS]

Commands:
`)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
}

// printHelp writes the whole help: what mcptape is, its usage and
// commands (printUsage), examples, and where to find more.
func printHelp(w io.Writer) {
	fmt.Fprint(w, "mcptape records, replays, load-tests and inspects MCP (Model Context Protocol) traffic.\n\n")
	printUsage(w)
	fmt.Fprint(w, `
Examples:
  mcptape record -o t.jsonl.zst -- npx -y some-mcp-server      # record a stdio server
  mcptape record --upstream http://127.0.0.1:3000/mcp -o t.jsonl.zst
  mcptape inspect t.jsonl.zst                                  # what happened, worst first
  mcptape show t.jsonl.zst --method 'tools/*'                  # the timeline
  mcptape replay t.jsonl.zst -- ./my-server                    # the same session again, compared
  mcptape mock t.jsonl.zst                                     # the recorded server, for a client (stdio)
  mcptape load --url http://127.0.0.1:8080/mcp --sessions 50 --duration 30s --call 'tools/call echo {"message":"hi"}'
  mcptape serve --http 127.0.0.1:8080                          # the built-in reference server

Run 'mcptape help COMMAND' for the flags and examples of a command,
'mcptape help scenario' for the --scenario file of load.
`)
}

func printCommandHelp(w io.Writer, c *command) {
	fmt.Fprintf(w, "%s\n\nUsage:\n  mcptape %s\n", c.summary, c.usage)
	if fs := c.flagUsage(); fs != "" {
		fmt.Fprintf(w, "\nFlags:\n%s", fs)
	}
	if c.examples != "" {
		fmt.Fprintf(w, "\nExamples:\n%s", c.examples)
	}
}
