package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/mcptape/mcptape/internal/httphead"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/transport"
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

// nonNegativeDuration is a duration flag's value refusing a negative
// duration: no flag of mcptape (a timeout, an interval, an age, a delay)
// means anything with one. It is the one check of every command's
// duration flags, so a negative one is a usage error (exit 2) naming the
// flag and the value as given ("-1h", not "-1h0m0s").
type nonNegativeDuration struct{ pflag.Value }

// Set refuses a negative duration, then sets the value.
func (v nonNegativeDuration) Set(s string) error {
	if d, err := time.ParseDuration(s); err == nil && d < 0 {
		return errors.New("a duration must not be negative")
	}
	return v.Value.Set(s)
}

// execute parses args and runs c, or the subcommand they name. On -h it
// prints the command's help to st.out and returns errHelp; a bad flag, a
// negative duration included, or an output path that cannot be written
// (checkOutputs: a missing directory) is a usage error (exit 2), found
// before c runs.
func (c *command) execute(ctx context.Context, st *stdio, args []string) error {
	c, args = c.resolve(args)
	named := *st
	named.cmd = c.name
	st = &named
	fs, run := c.flagSet()
	fs.VisitAll(func(f *pflag.Flag) { // (not in help: pflag shows a wrapped 0s as a default)
		if f.Value.Type() == "duration" {
			f.Value = nonNegativeDuration{f.Value}
		}
	})
	err := fs.Parse(args)
	if errors.Is(err, pflag.ErrHelp) {
		printCommandHelp(st.out, c)
		return errHelp
	}
	if err != nil {
		return usageError("%v (%ssee 'mcptape help %s')", err, flagHint(c, err), c.name)
	}
	if err := checkOutputs(fs); err != nil { // output.go: before anything is created
		return err
	}
	return run(ctx, st, fs.Args())
}

// resolve returns the command that args run under c: the subcommand their
// first argument names ("report merge"), else c, with the arguments left.
func (c *command) resolve(args []string) (*command, []string) {
	for len(args) > 0 && c.subcommands[args[0]] != nil {
		c, args = c.subcommands[args[0]], args[1:]
	}
	return c, args
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

// insecureFlag declares --insecure on fs, the same for every command that
// talks to an https server (record, replay, load); what says where it
// applies ("HTTP mode: ").
func insecureFlag(fs *pflag.FlagSet, p *bool, what string) {
	fs.BoolVar(p, "insecure", false, what+"accept any certificate from an https server (self-signed test servers)")
}

// checkServerURL checks the URL given to flag for a live server: an
// absolute http, https, ws or wss URL (ws and wss: MCP over WebSocket).
// Anything else is a usage error (exit 2).
func checkServerURL(flag, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return usageError("%s %q: %v", flag, raw, errors.Unwrap(err))
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https", "ws", "wss":
		if u.Host == "" {
			return usageError("%s %q: no host (want %s://HOST[:PORT]/PATH)", flag, raw, strings.ToLower(u.Scheme))
		}
		return nil
	case "":
		return usageError("%s %q: no scheme: want http://, https://, ws:// or wss://", flag, raw)
	}
	return usageError("%s %q: scheme %q: want http, https, ws or wss", flag, raw, u.Scheme)
}

// wsProtoFlag is --ws-subprotocol (replay, load): the WebSocket
// subprotocols offered to a ws:// or wss:// --url, comma-separated; the
// empty value offers none.
type wsProtoFlag struct {
	protos []string
	set    bool // given on the command line
}

// register declares --ws-subprotocol on fs.
func (w *wsProtoFlag) register(fs *pflag.FlagSet) {
	fs.Var(w, "ws-subprotocol", "with a ws:// or wss:// --url: the WebSocket subprotocols to offer, comma-separated `LIST` "+
		"(default "+transport.WSSubprotocol+"); '' offers none, for servers that refuse an offer they do not know. "+
		"A server that selects none is accepted either way")
}

// String implements pflag.Value.
func (w *wsProtoFlag) String() string {
	if !w.set {
		return ""
	}
	return strings.Join(w.protos, ",")
}

// Type implements pflag.Value.
func (w *wsProtoFlag) Type() string { return "list" }

// Set implements pflag.Value: a bad name is an error (a usage error).
func (w *wsProtoFlag) Set(v string) error {
	w.protos, w.set = []string{}, true
	if v == "" {
		return nil
	}
	for _, p := range strings.Split(v, ",") {
		p = strings.TrimSpace(p)
		if !httphead.IsToken(p) {
			return fmt.Errorf("subprotocol %q is not a token (letters, digits and !#$%%&'*+-.^_`|~)", p)
		}
		w.protos = append(w.protos, p)
	}
	return nil
}

// check refuses --ws-subprotocol without a ws:// or wss:// url.
func (w *wsProtoFlag) check(url string) error {
	if w.set && !transport.IsWebSocketURL(url) {
		return usageError("--ws-subprotocol needs a ws:// or wss:// --url")
	}
	return nil
}

// speedFlag parses a --speed value (replay.ParseSpeed): 0 for max.
func speedFlag(s string) (float64, error) {
	v, err := replay.ParseSpeed(s)
	if err != nil {
		return 0, usageError("--speed %v", err)
	}
	return v, nil
}

// replaySpeed returns the replay option of a --speed value.
func replaySpeed(s string) (replay.Option, error) {
	v, err := speedFlag(s)
	switch {
	case err != nil:
		return nil, err
	case v == 0:
		return replay.WithMaxSpeed(), nil
	}
	return replay.WithSpeed(v), nil
}
