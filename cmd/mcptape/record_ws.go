package main

// WebSocket mode of "mcptape record": --upstream ws://HOST/PATH runs a
// recording WebSocket proxy (capture.WSProxy) instead of the HTTP one,
// with the same flags (those about HTTP bodies do not apply).

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcptape/mcptape/capture"
	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/internal/syncio"
	"github.com/mcptape/mcptape/tape"
)

// wsOnlyHTTPFlags are the HTTP-mode flags WebSocket mode does not have
// (yet): bodies to decode, sampling and filtering, a TLS listener, metrics,
// rotation.
var wsOnlyHTTPFlags = append([]string{"max-decoded-mib", "decode-budget-mib", "sample", "seed", "record-only", "skip", "tls-cert", "tls-key", "metrics"},
	rotateFlagNames[:]...)

// wsFlagsApply refuses, as usage errors, the HTTP-mode flags that do not
// apply to a ws:// or wss:// upstream, rather than ignoring them.
func wsFlagsApply(fs *pflag.FlagSet) error {
	for _, name := range wsOnlyHTTPFlags {
		if fs.Changed(name) {
			return usageError("--%s is not supported with a WebSocket --upstream (ws:// or wss://)", name)
		}
	}
	return nil
}

// runRecordWS runs WebSocket mode until ctx ends (SIGINT, SIGTERM or SIGHUP), then
// closes every session and the tape. It prints, on stderr, the URL clients
// must use.
func runRecordWS(ctx context.Context, st *stdio, h *httpFlags, c httpRecordConfig) error {
	start := time.Now()
	logf, debugf := recordLogs(st, c.Verbose)
	switch {
	case c.Output == "-":
		return usageError("-o -: a tape is a file; give a file name")
	case c.Flush <= 0:
		return usageError("--flush %v: must be positive", c.Flush)
	}
	addr, err := listenAddr(h.listen)
	if err != nil {
		return usageError("--listen %q: %v", h.listen, err)
	}
	opts := proxyOptions(ctx, h, c, addr, logf, debugf)
	path := c.Output
	if path == "" {
		if path, err = defaultTapePath(os.Getenv, start, os.Getpid()); err != nil {
			return err
		}
	}
	var tw lateTape
	p, err := capture.NewWSProxy(h.upstream, &tw, opts...)
	if err != nil {
		return usageError("%v", err)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, listenNetwork(addr), addr)
	if err != nil {
		return err
	}
	hdr := httpHeader(c.Header, h, ln.Addr().String(), start)
	hdr.Transport = "ws"
	w, err := createTape(path, c.Force, hdr, tape.WithFlushInterval(c.Flush), tape.WithLevel(cmp.Or(c.Level, tape.DefaultLevel)), recoverWrites(logf))
	if err != nil {
		ln.Close()
		return err
	}
	tw.w = w
	warnReachable(logf, "listening", ln.Addr(), "uses your upstream session and ends up in the tape")
	logf("proxying ws://%s%s to %s, recording to %s", ln.Addr(), p.Upstream().EscapedPath(), capture.RedactURL(h.upstream), path)
	serveErr := p.Serve(ctx, ln)
	closeErr := w.Close()
	if c.Verbose {
		s := p.Stats()
		logf("tape %s: %s, %s, %d client and %d server %s", path, english.Count(s.Sessions, "session"), english.Count(s.Refused, "refused upgrade"),
			s.ClientMessages, s.ServerMessages, english.Noun(s.ServerMessages, "message"))
	}
	if serveErr != nil {
		return serveErr
	}
	if closeErr != nil {
		return fmt.Errorf("closing tape: %w", closeErr)
	}
	return nil
}

// recordLogs returns the loggers of the proxy modes of "mcptape record":
// warnings always, details with -v, one line each on stderr.
func recordLogs(st *stdio, verbose bool) (logf, debugf func(string, ...any)) {
	errw := syncio.NewWriter(st.err)
	logf = func(format string, a ...any) { fmt.Fprintf(errw, "mcptape record: "+format+"\n", a...) }
	debugf = func(string, ...any) {}
	if verbose {
		debugf = logf
	}
	return logf, debugf
}

// proxyOptions are the capture options the HTTP and WebSocket modes share:
// Host handling, TLS, logs, redaction, the recorded frame bound, the
// shutdown grace (cut short by a second signal: stopNow(ctx)), and the
// listen address when it is a name (Host headers may use it).
func proxyOptions(ctx context.Context, h *httpFlags, c httpRecordConfig, addr string, logf, debugf func(string, ...any)) []capture.HTTPOption {
	opts := []capture.HTTPOption{capture.WithPreserveHost(h.preserveHost), capture.WithInsecureTLS(h.insecure), capture.WithLogf(logf, debugf),
		capture.WithShutdownCut(stopNow(ctx))}
	if c.Grace > 0 {
		opts = append(opts, capture.WithShutdownGrace(c.Grace))
	}
	if h.noRedact {
		opts = append(opts, capture.WithoutRedaction())
	}
	if len(h.redactHeaders) > 0 {
		opts = append(opts, capture.WithRedactHeaders(h.redactHeaders...))
	}
	if c.MaxBody > 0 {
		opts = append(opts, capture.WithMaxBody(c.MaxBody))
	}
	if host, _, _ := net.SplitHostPort(addr); net.ParseIP(host) == nil {
		opts = append(opts, capture.WithListenAddr(addr))
	}
	return opts
}
