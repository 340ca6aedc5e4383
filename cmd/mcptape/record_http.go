package main

// HTTP mode of "mcptape record": a recording reverse proxy in front of a
// Streamable HTTP (or legacy HTTP+SSE) server. record.go declares these
// flags with declareHTTPFlags and, when httpMode says so, runs
// runRecordHTTP instead of starting a stdio server.

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcptape/mcptape/capture"
	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// httpFlags are the HTTP-mode flags of "mcptape record".
type httpFlags struct {
	listen        string
	upstream      string
	preserveHost  bool
	insecure      bool
	redactHeaders []string
	noRedact      bool
	maxDecoded    int // MiB
	decodeBudget  int // MiB
	rotate        rotateFlags
	sample        float64
	seed          uint64
	recordOnly    []string
	skip          []string
	tlsCert       string
	tlsKey        string
	metrics       string
}

// httpFlagNames are the flags that only make sense in HTTP mode.
var httpFlagNames = append([]string{"listen", "upstream", "preserve-host", "insecure", "redact-header", "no-redact", "max-decoded-mib", "decode-budget-mib",
	"sample", "seed", "record-only", "skip", "tls-cert", "tls-key", "metrics"}, rotateFlagNames[:]...)

// declareHTTPFlags declares the HTTP-mode flags of "mcptape record" on fs.
func declareHTTPFlags(fs *pflag.FlagSet) *httpFlags {
	var h httpFlags
	fs.StringVar(&h.upstream, "upstream", "", "HTTP mode: record a Streamable HTTP or HTTP+SSE server at this `URL` (http:// or https://), or an MCP WebSocket server (ws:// or wss://), instead of running a stdio server")
	fs.StringVar(&h.listen, "listen", capture.DefaultListen, "HTTP mode: where clients connect (`HOST:PORT`, or a bare PORT on 127.0.0.1; port 0 picks a free one)")
	fs.StringVar(&h.tlsCert, "tls-cert", "", "HTTP mode: listen with HTTPS, with the certificate (chain) in this PEM `FILE` (HTTP/1.1 only; see README)")
	fs.StringVar(&h.tlsKey, "tls-key", "", "HTTP mode: the private key of --tls-cert, a PEM `FILE`")
	fs.BoolVar(&h.preserveHost, "preserve-host", false, "HTTP mode: forward a Host header that names the proxy as it is (default: replace it with the upstream's)")
	insecureFlag(fs, &h.insecure, "HTTP mode: ")
	fs.StringSliceVar(&h.redactHeaders, "redact-header", nil, "HTTP mode: also redact this header's values in the tape (repeatable; Authorization, cookies and *token*/*secret*/*key*/*password*/*auth* names always are)")
	fs.BoolVar(&h.noRedact, "no-redact", false, "HTTP mode: record every header and query value as it is, secrets included")
	fs.StringArrayVar(&h.recordOnly, "record-only", nil, "HTTP mode: record only messages whose method matches `GLOB` (repeatable; responses go with their request; sessions' open and close events are always recorded)")
	fs.StringArrayVar(&h.skip, "skip", nil, "HTTP mode: do not record messages whose method matches `GLOB` (repeatable; responses go with their request; not a pattern of --record-only)")
	fs.Float64Var(&h.sample, "sample", 1, "HTTP mode: record this share `F` of sessions (0 to 1), each whole or not at all; the rest is forwarded unrecorded")
	fs.Uint64Var(&h.seed, "seed", 0, "HTTP mode: with --sample, the seed `N` that makes the choice of sessions repeatable (default: random, written in the tape header)")
	fs.IntVar(&h.maxDecoded, "max-decoded-mib", capture.DefaultMaxDecoded>>20, "HTTP mode: most MiB recorded of one gzip/deflate body (or event) once decoded; longer ones are forwarded whole but recorded cut")
	fs.IntVar(&h.decodeBudget, "decode-budget-mib", capture.DefaultDecodeBudget>>20, "HTTP mode: most MiB of decoded bodies held at once across all exchanges; a body past it is recorded cut")
	h.rotate.declare(fs) // record_rotate.go
	fs.StringVar(&h.metrics, "metrics", "", "HTTP mode: serve the proxy's metrics (Prometheus text format, /metrics) and /healthz on `ADDR` (HOST:PORT, or a bare PORT on 127.0.0.1)")
	return &h
}

// httpMode reports whether the parsed command line of "mcptape record" asks
// for HTTP mode (--upstream given), after checking that the HTTP-mode flags
// and the server command are not mixed up. Errors are usage errors.
func (h *httpFlags) httpMode(fs *pflag.FlagSet, args []string) (bool, error) {
	if h.upstream == "" {
		for _, name := range httpFlagNames {
			if fs.Changed(name) {
				return false, usageError("--%s needs --upstream URL (HTTP mode)", name)
			}
		}
		return false, nil
	}
	switch {
	case len(args) > 0:
		return true, usageError("--upstream records an HTTP server; a server command (%q) is for stdio mode: give one or the other", args[0])
	case h.noRedact && len(h.redactHeaders) > 0:
		return true, usageError("--no-redact and --redact-header contradict each other")
	case h.maxDecoded <= 0 || h.maxDecoded > 1<<20:
		return true, usageError("--max-decoded-mib %d: must be between 1 and %d", h.maxDecoded, 1<<20)
	case h.decodeBudget <= 0 || h.decodeBudget > 1<<20:
		return true, usageError("--decode-budget-mib %d: must be between 1 and %d", h.decodeBudget, 1<<20)
	case !(h.sample >= 0 && h.sample <= 1):
		return true, usageError("--sample %v: want a share from 0 to 1", h.sample)
	case fs.Changed("seed") && !fs.Changed("sample"):
		return true, usageError("--seed makes --sample repeatable: give --sample too")
	case (h.tlsCert == "") != (h.tlsKey == ""):
		return true, usageError("--tls-cert and --tls-key go together: give both")
	}
	for _, p := range h.recordOnly {
		if slices.Contains(h.skip, p) {
			return true, usageError("--record-only %q and --skip %q contradict each other: a pattern is kept or skipped, not both", p, p)
		}
	}
	if !fs.Changed("seed") {
		h.seed = randomSeed()
	}
	return true, h.rotate.check()
}

// httpRecordConfig is what HTTP mode takes from the rest of "mcptape
// record".
type httpRecordConfig struct {
	Output  string        // -o; "" picks defaultTapePath
	Force   bool          // --force: overwrite an existing -o file
	Flush   time.Duration // --flush
	Level   int           // --level (zstd); 0: tape.DefaultLevel
	MaxBody int           // bytes recorded of one body or event (--max-frame-mib << 20); 0: the default
	Verbose bool          // -v
	Grace   time.Duration // --grace: how long open exchanges may finish at shutdown; 0: capture.DefaultShutdownGrace
	// Header is the tape header built for the command line (recordHeader:
	// tool version, argv with secrets redacted); Transport, Target and
	// Extra are set here.
	Header tape.Header
}

// runRecordHTTP runs HTTP mode until ctx ends (SIGINT, SIGTERM or SIGHUP), then
// shuts the proxy down and closes the tape. It always prints, on stderr,
// the URL clients must use.
func runRecordHTTP(ctx context.Context, st *stdio, h *httpFlags, c httpRecordConfig) error {
	start := time.Now()
	logf, debugf := recordLogs(st, c.Verbose)
	if c.Output == "-" {
		return usageError("-o -: a tape is a file; give a file name")
	}
	addr, err := listenAddr(h.listen)
	if err != nil {
		return usageError("--listen %q: %v", h.listen, err)
	}
	if c.Flush <= 0 {
		return usageError("--flush %v: must be positive", c.Flush)
	}
	opts := append(proxyOptions(ctx, h, c, addr, logf, debugf),
		capture.WithMaxDecoded(h.maxDecoded<<20),
		capture.WithDecodeBudget(h.decodeBudget<<20),
		capture.WithSample(h.sample, h.seed),
		capture.WithMethodFilter(h.recordOnly, h.skip))
	if h.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(h.tlsCert, h.tlsKey)
		if err != nil {
			return usageError("--tls-cert %s --tls-key %s: %v", h.tlsCert, h.tlsKey, err)
		}
		opts = append(opts, capture.WithTLS(&tls.Config{Certificates: []tls.Certificate{cert}}))
	}
	path := c.Output
	if path == "" {
		if path, err = defaultTapePath(os.Getenv, start, os.Getpid()); err != nil {
			return err
		}
	}
	// The proxy is built before anything is opened so that bad flags cost
	// nothing; it records into the tape through a late-bound writer.
	var tw lateTape
	var p *capture.HTTPProxy
	var metrics *proxyMetrics // record_metrics.go
	metricsAddr := ""
	if h.metrics != "" {
		if metricsAddr, err = listenAddr(h.metrics); err != nil {
			return usageError("--metrics %q: %v", h.metrics, err)
		}
		// Read at scrapes, which begin once p and the tape are set.
		metrics = newProxyMetrics(func() capture.HTTPStats { return p.Stats() }, func() (int64, int64, int64) { return tapeCountersOf(tw.w) })
		opts = append(opts, capture.WithObserver(metrics))
	}
	p, err = capture.NewHTTPProxy(h.upstream, &tw, opts...)
	if err != nil {
		return usageError("%v", err)
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, listenNetwork(addr), addr)
	if err != nil {
		return err // "listen tcp 127.0.0.1:8931: bind: address already in use"
	}
	var metricsLn net.Listener // before the tape: a busy address leaves none behind
	if metrics != nil {
		if metricsLn, err = listenMetrics(ctx, metricsAddr); err != nil {
			ln.Close()
			return err
		}
	}
	w, err := h.rotate.open(path, c.Force, httpHeader(c.Header, h, ln.Addr().String(), start), logf,
		tape.WithFlushInterval(c.Flush), tape.WithLevel(cmp.Or(c.Level, tape.DefaultLevel)))
	if err != nil {
		ln.Close()
		if metricsLn != nil {
			metricsLn.Close()
		}
		return err
	}
	tw.w = w
	if rot, ok := w.(*tape.Rotator); ok {
		path = rot.Stats().Path
	}
	warnReachable(logf, "listening", ln.Addr(), "uses your upstream session and ends up in the tape")
	if metrics != nil {
		warnReachable(logf, "--metrics listening", metricsLn.Addr(), "reads the proxy's metrics (the methods called, sessions, traffic)")
		at, stop := serveMetrics(ctx, metricsLn, metrics, logf)
		defer stop()
		logf("metrics on http://%s/metrics, health on /healthz", at)
	}
	logf("proxying %s to %s, recording to %s", proxyURL(ln.Addr().String(), p.Upstream(), h.tlsCert != ""), capture.RedactURL(h.upstream), path)
	stopping := announceStop(ctx, logf, "stops at once", func(os.Signal) string {
		if n := p.Stats().OpenExchanges; n > 0 {
			return fmt.Sprintf("%s may finish within %v", english.Count(n, "open exchange"), cmp.Or(c.Grace, capture.DefaultShutdownGrace))
		}
		return ""
	})
	defer stopping()
	serveErr := p.Serve(ctx, ln)
	closeErr := w.Close()
	if c.Verbose {
		s := p.Stats()
		logf("tape %s: %s, %d client and %d server %s, %s", path, english.Count(s.Exchanges, "exchange"), s.ClientMessages, s.ServerMessages,
			english.Noun(s.ServerMessages, "message"), english.Count(s.UpstreamErrors, "upstream error"))
	}
	if serveErr != nil {
		return serveErr
	}
	if closeErr != nil {
		return fmt.Errorf("closing tape: %w", closeErr)
	}
	return nil
}

// lateTape hands records to a tape writer set after the proxy was built;
// nothing is recorded before the listener exists.
type lateTape struct{ w recordTape }

func (l *lateTape) Write(r *tape.Record) error { return l.w.Write(r) }

// WriteClassified writes message r and returns jsonrpc.Classify's verdict
// on its frame, parsing the frame once when the tape classifies as it
// writes (*tape.Writer): without it the proxy would write, then parse the
// frame a second time to classify it.
func (l *lateTape) WriteClassified(r *tape.Record) (jsonrpc.Info, error) {
	if cw, ok := l.w.(interface {
		WriteClassified(*tape.Record) (jsonrpc.Info, error)
	}); ok {
		return cw.WriteClassified(r)
	}
	err := l.w.Write(r)
	return jsonrpc.Classify(r.Frame), err
}

// httpHeader completes the tape header for HTTP mode.
func httpHeader(h tape.Header, f *httpFlags, listen string, start time.Time) tape.Header {
	if h.Time == 0 {
		h.Time = start.UnixNano()
	}
	if n := len(h.Argv); n > 0 && h.Argv[n-1] == "--" {
		h.Argv = h.Argv[:n-1] // recordHeader ends argv with "--" and the (absent) command
	}
	h.Transport = "http"
	h.Target = capture.RedactURL(f.upstream)
	extra := struct {
		Listen        string   `json:"listen"`
		PreserveHost  bool     `json:"preserve_host,omitempty"`
		Insecure      bool     `json:"insecure,omitempty"`
		RedactHeaders []string `json:"redact_headers,omitempty"`
		NoRedact      bool     `json:"no_redact,omitempty"`
		Pid           int      `json:"pid"`
		Sample        *float64 `json:"sample,omitempty"` // set when sampling
		Seed          *uint64  `json:"seed,omitempty"`
		RecordOnly    []string `json:"record_only,omitempty"`
		Skip          []string `json:"skip,omitempty"`
	}{Listen: listen, PreserveHost: f.preserveHost, Insecure: f.insecure, RedactHeaders: f.redactHeaders, NoRedact: f.noRedact, Pid: os.Getpid(),
		RecordOnly: f.recordOnly, Skip: f.skip}
	if f.sample < 1 {
		extra.Sample, extra.Seed = &f.sample, &f.seed
	}
	h.Extra, _ = json.Marshal(extra) // strings, bools and an int: cannot fail
	return h
}

// proxyURL is the URL clients use: the listen address with the upstream's
// path.
func proxyURL(listen string, upstream *url.URL, https bool) string {
	if https {
		return "https://" + listen + upstream.EscapedPath()
	}
	return "http://" + listen + upstream.EscapedPath()
}

// randomSeed picks a seed for --sample when none is given.
func randomSeed() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail (Go 1.24+)
	return binary.LittleEndian.Uint64(b[:])
}
