package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"
)

// errHelp is returned when a command printed its help because of -h.
var errHelp = errors.New("help requested")

// flagSet builds the flag set of c and returns it with c's run function.
func (c *command) flagSet() (*pflag.FlagSet, runFunc) {
	fs := pflag.NewFlagSet(c.name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.SortFlags = false
	return fs, c.setup(fs)
}

// execute parses args and runs c. On -h it prints the command's help to
// st.out and returns errHelp; a bad flag is a usage error (exit 2).
func (c *command) execute(ctx context.Context, st *stdio, args []string) error {
	if len(args) > 0 {
		if sub, ok := c.subcommands[args[0]]; ok {
			return sub(ctx, st, args[1:])
		}
	}
	fs, run := c.flagSet()
	err := fs.Parse(args)
	if errors.Is(err, pflag.ErrHelp) {
		printCommandHelp(st.out, c)
		return errHelp
	}
	if err != nil {
		return usageError("%v (see 'mcptape help %s')", err, c.name)
	}
	return run(ctx, st, fs.Args())
}

// flagUsage renders the flags of c for its help text.
func (c *command) flagUsage() string {
	fs, _ := c.flagSet()
	return fs.FlagUsages()
}

func versionCmd() *command {
	return &command{
		name:    "version",
		summary: "Print the mcptape version",
		usage:   "version",
		setup: func(fs *pflag.FlagSet) runFunc {
			return func(_ context.Context, st *stdio, args []string) error {
				if len(args) > 0 {
					return usageError("version takes no arguments")
				}
				fmt.Fprintf(st.out, "mcptape %s\n", version)
				return nil
			}
		},
	}
}
