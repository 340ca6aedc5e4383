// Command installpeers installs every real MCP peer that mcptape's
// end-to-end tests use (npm ci of testdata/peers, go build of
// testdata/gopeers, npm ci of testdata/conformance: the official
// conformance suite and its Node 22, on linux/amd64 only; npm ci of
// testdata/duckdb: DuckDB for the docs/sql.md test) into the peer
// cache, so that CI sees install errors before the tests start, and prints
// where it put them.
//
//	go run ./internal/peertest/cmd/installpeers [-v] [-cache DIR]
//
// The cache is -cache, else $MCPTAPE_PEERS_DIR, else <repo>/.cache/peers.
// Nothing is reinstalled when the pinned sources have not changed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "installpeers:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("installpeers", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cache := fs.String("cache", "", "install into `dir` (default $"+peertest.EnvCacheDir+" or <repo>/.cache/peers)")
	verbose := fs.Bool("v", false, "show the output of npm ci and go build")
	timeout := fs.Duration("timeout", 10*time.Minute, "give up after this long")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return nil
	} else if err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	var opts []peertest.Option
	if *cache != "" {
		opts = append(opts, peertest.WithCacheDir(*cache))
	}
	if *verbose {
		opts = append(opts, peertest.WithLog(stderr))
	}
	in, err := peertest.NewInstaller(opts...)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()

	start := time.Now()
	npm, err := in.NPM(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "npm peers (%.1fs): %s\n", time.Since(start).Seconds(), npm.Dir)
	fmt.Fprintf(stdout, "  node:              %s %s\n", npm.Node, npm.NodeVersion)
	fmt.Fprintf(stdout, "  server-everything: %s\n", strings.Join(npm.ServerEverything, " "))
	fmt.Fprintf(stdout, "  inspector cli:     %s\n", strings.Join(npm.InspectorCLI, " "))

	start = time.Now()
	gp, err := in.Go(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "go peers (%.1fs): %s\n", time.Since(start).Seconds(), gp.Dir)
	fmt.Fprintf(stdout, "  everything-server: %s\n", gp.EverythingServer)
	fmt.Fprintf(stdout, "  everything-client: %s\n", gp.EverythingClient)
	fmt.Fprintf(stdout, "  mcpgoserver:       %s\n", gp.MCPGoServer)

	start = time.Now()
	conf, err := in.Conformance(ctx)
	switch {
	case errors.Is(err, peertest.ErrConformanceUnsupported):
		fmt.Fprintf(stdout, "conformance suite: skipped: %v\n", err)
	case err != nil:
		return err
	default:
		fmt.Fprintf(stdout, "conformance suite (%.1fs): %s\n", time.Since(start).Seconds(), conf.Dir)
		fmt.Fprintf(stdout, "  run:               %s\n", strings.Join(conf.Suite, " "))
	}

	start = time.Now()
	duck, err := in.DuckDB(ctx)
	switch {
	case errors.Is(err, peertest.ErrDuckDBUnsupported):
		fmt.Fprintf(stdout, "duckdb: skipped: %v\n", err)
	case err != nil:
		return err
	default:
		fmt.Fprintf(stdout, "duckdb %s (%.1fs): %s\n", peertest.DuckDBVersion, time.Since(start).Seconds(), duck.Dir)
	}
	return nil
}
