package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/spf13/pflag"

	"github.com/mcptape/mcptape/internal/clientconfig"
)

// wrapFlags are the flags "mcptape wrap" and "mcptape unwrap" share.
type wrapFlags struct {
	client  string
	config  string
	all     bool
	mcptape string // wrap only
}

func wrapCmd() *command {
	return &command{
		name:    "wrap",
		summary: "Make an MCP client run its stdio servers through 'mcptape record'",
		usage:   "wrap --client " + strings.Join(clientconfig.ClientNames(), "|") + " [--config FILE] [--mcptape PATH] (SERVER... | --all)",
		examples: `  mcptape wrap --client claude-desktop everything      # then restart Claude Desktop
  mcptape wrap --client cursor --all                     # every stdio server Cursor runs
  mcptape wrap --client vscode --config .vscode/mcp.json github
  mcptape unwrap --client claude-desktop everything      # back as it was

  A wrapped entry runs "mcptape record --name SERVER -- COMMAND ARGS...": each
  time the client starts the server, a tape SERVER-TIME-PID.jsonl.zst appears
  under $XDG_STATE_HOME/mcptape/tapes (~/.local/state/mcptape/tapes; on
  Windows %LOCALAPPDATA%\mcptape\tapes).
  Only "command" and "args" change; the file's other bytes stay, a copy of it
  is kept as FILE.mcptape-backup, and wrapping twice changes nothing.
  HTTP servers ("url") are refused: record them with 'mcptape record --upstream'.
`,
		setup: func(fs *pflag.FlagSet) runFunc {
			f := declareWrapFlags(fs)
			fs.StringVar(&f.mcptape, "mcptape", "", "the mcptape `PATH` the entries run (default: this program)")
			return func(_ context.Context, st *stdio, args []string) error {
				return runWrap(st, f, args, true)
			}
		},
	}
}

func unwrapCmd() *command {
	return &command{
		name:    "unwrap",
		summary: "Undo 'mcptape wrap': the client runs its servers directly again",
		usage:   "unwrap --client " + strings.Join(clientconfig.ClientNames(), "|") + " [--config FILE] (SERVER... | --all)",
		examples: `  mcptape unwrap --client claude-desktop everything
  mcptape unwrap --client cursor --all
`,
		setup: func(fs *pflag.FlagSet) runFunc {
			f := declareWrapFlags(fs)
			return func(_ context.Context, st *stdio, args []string) error {
				return runWrap(st, f, args, false)
			}
		},
	}
}

// declareWrapFlags declares the flags wrap and unwrap share.
func declareWrapFlags(fs *pflag.FlagSet) *wrapFlags {
	f := &wrapFlags{}
	fs.StringVar(&f.client, "client", "", "the MCP `CLIENT`: "+strings.Join(clientconfig.ClientNames(), ", "))
	fs.StringVar(&f.config, "config", "", "the client's configuration `FILE` (default: where the client keeps it on this system)")
	fs.BoolVar(&f.all, "all", false, "every stdio server of the file")
	return f
}

// runWrap wraps (or unwraps) the servers args names.
func runWrap(st *stdio, f *wrapFlags, args []string, wrap bool) error {
	verb := map[bool]string{true: "wrap", false: "unwrap"}[wrap]
	if f.client == "" {
		return usageError("--client is required (one of %s)", strings.Join(clientconfig.ClientNames(), ", "))
	}
	c, err := clientconfig.FindClient(f.client)
	if err != nil {
		return usageError("--client: %v", err)
	}
	if f.all == (len(args) > 0) {
		return usageError("name the servers to %s, or give --all (not both)", verb)
	}
	path := f.config
	if path == "" {
		env, err := clientconfig.SystemEnv()
		if err != nil {
			return err
		}
		if path, err = c.DefaultPath(runtime.GOOS, env); err != nil {
			return err
		}
	}
	o := clientconfig.Options{Servers: args, All: f.all}
	var ch clientconfig.Change
	if wrap {
		if o.Mcptape, err = mcptapePath(f.mcptape); err != nil {
			return err
		}
		ch, err = c.WrapFile(path, o)
	} else {
		ch, err = c.UnwrapFile(path, o)
	}
	if err != nil && f.config == "" && errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no %s configuration file at %s, its place on this system: is the client installed, with an MCP server configured? Or name the file with --config",
			c.Name, path)
	}
	if err != nil {
		return err
	}
	for _, oc := range ch.Outcomes {
		fmt.Fprintf(st.out, "%s: %s (%s)\n", oc.Server, oc.Action, oc.Table)
	}
	if ch.Backup == "" {
		fmt.Fprintf(st.err, "mcptape %s: %s unchanged\n", verb, ch.Path)
		return nil
	}
	fmt.Fprintf(st.err, "mcptape %s: updated %s (the previous version is in %s); restart the client to apply\n", verb, ch.Path, ch.Backup)
	return nil
}

// mcptapePath returns the absolute path of the mcptape the entries run:
// the one given, or this program.
func mcptapePath(given string) (string, error) {
	if given == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", fmt.Errorf("finding this program's path (give --mcptape): %w", err)
		}
		return exe, nil
	}
	abs, err := filepath.Abs(given)
	if err != nil {
		return "", fmt.Errorf("--mcptape %q: %w", given, err)
	}
	if _, err := os.Stat(abs); err != nil {
		return "", fmt.Errorf("--mcptape: %w", err)
	}
	return abs, nil
}
