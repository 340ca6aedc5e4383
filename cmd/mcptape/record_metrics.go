package main

// --metrics ADDR: the recording proxy's own metrics in the Prometheus text
// format, and /healthz. Built on github.com/prometheus/client_golang (its
// own registry, not the global one) over the proxy's HTTPObserver hooks
// and counters.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mcptape/mcptape/capture"
	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// maxMethodLabels bounds the distinct method labels of the messages
// counter: methods are chosen by clients, and each label value is a time
// series. Past it, new methods count as "other".
const maxMethodLabels = 128

// latencyBuckets are the bounds of the latency histograms, in seconds:
// 50 µs to 60 s.
var latencyBuckets = []float64{50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 500e-3, 1, 2.5, 5, 10, 30, 60}

// proxyMetrics is the proxy's HTTPObserver and the metrics it feeds.
type proxyMetrics struct {
	reg       *prometheus.Registry
	exchanges *prometheus.CounterVec
	messages  *prometheus.CounterVec
	forwarded *prometheus.CounterVec
	upstream  prometheus.Histogram
	overhead  prometheus.Histogram

	mu      sync.Mutex
	methods map[string]bool // method labels in use
}

// tapeCounters reads what the tape did so far.
type tapeCounters func() (size, recorded, lost int64)

// newProxyMetrics registers the metrics; stats and tc are read at each
// scrape.
func newProxyMetrics(stats func() capture.HTTPStats, tc tapeCounters) *proxyMetrics {
	m := &proxyMetrics{reg: prometheus.NewRegistry(), methods: make(map[string]bool)}
	m.exchanges = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcptape_exchanges_total",
		Help: "HTTP exchanges forwarded, by the status the client got (0: none sent)."}, []string{"status"})
	m.messages = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcptape_messages_total",
		Help: "JSON-RPC messages forwarded, recorded or not, by direction (c2s, s2c), kind and method (a response or error: the method of the request it answers in its session, \"\" when none was seen; \"other\" past 128 methods)."},
		[]string{"direction", "kind", "method"})
	m.forwarded = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "mcptape_forwarded_bytes_total",
		Help: "HTTP body bytes forwarded, by direction (c2s: requests, s2c: responses)."}, []string{"direction"})
	m.upstream = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "mcptape_upstream_seconds",
		Help: "Time from a request's dispatch to the upstream to the upstream's response head.", Buckets: latencyBuckets})
	m.overhead = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "mcptape_proxy_overhead_seconds",
		Help: "Time from a request head's arrival at the proxy to the request's dispatch to the upstream (a request body of known length read included).", Buckets: latencyBuckets})
	counter := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, f)
	}
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f)
	}
	m.reg.MustRegister(m.exchanges, m.messages, m.forwarded, m.upstream, m.overhead,
		counter("mcptape_recorded_bytes_total", "Bytes of records accepted by the tape (uncompressed), over every tape of a rotated recording.",
			func() float64 { _, rec, _ := tc(); return float64(rec) }),
		counter("mcptape_records_lost_total", "Records not written to the tape because writing failed (a full disk); a gap marker says where.",
			func() float64 { _, _, lost := tc(); return float64(lost) }),
		counter("mcptape_records_unrecorded_total", "Records left out by --sample, --record-only or --skip (forwarded all the same).",
			func() float64 { return float64(stats().Unrecorded) }),
		counter("mcptape_messages_cut_total", "Messages recorded cut (forwarded whole): bodies or events past a recording bound.",
			func() float64 { return float64(stats().Cut) }),
		counter("mcptape_upstream_errors_total", "Exchanges that got no upstream response (502) or broke off mid-stream.",
			func() float64 { return float64(stats().UpstreamErrors) }),
		gauge("mcptape_tape_bytes", "Size of the open tape on disk (compressed).",
			func() float64 { size, _, _ := tc(); return float64(size) }),
		gauge("mcptape_open_sessions", "Sessions open in the tape.",
			func() float64 { return float64(stats().OpenSessions) }),
		gauge("mcptape_open_streams", "Event streams (and bodies of unknown length) being forwarded.",
			func() float64 { return float64(stats().OpenStreams) }),
	)
	return m
}

// Exchange implements capture.HTTPObserver.
func (m *proxyMetrics) Exchange(e *capture.ExchangeStats) {
	m.exchanges.WithLabelValues(strconv.Itoa(e.Status)).Inc()
	m.forwarded.WithLabelValues(string(tape.ClientToServer)).Add(float64(e.RequestBytes))
	m.forwarded.WithLabelValues(string(tape.ServerToClient)).Add(float64(e.ResponseBytes))
	if e.Upstream > 0 {
		m.upstream.Observe(e.Upstream.Seconds())
	}
	if e.Overhead > 0 {
		m.overhead.Observe(e.Overhead.Seconds())
	}
}

// kindNames label the kinds of messages.
var kindNames = map[jsonrpc.Kind]string{jsonrpc.KindRequest: "request", jsonrpc.KindNotification: "notification",
	jsonrpc.KindResponse: "response", jsonrpc.KindError: "error"}

// Message implements capture.HTTPObserver.
func (m *proxyMetrics) Message(dir tape.Direction, kind jsonrpc.Kind, method string) {
	k, ok := kindNames[kind]
	if !ok {
		k = "invalid"
	}
	m.messages.WithLabelValues(string(dir), k, m.methodLabel(method)).Inc()
}

// methodLabel bounds the method label values.
func (m *proxyMetrics) methodLabel(method string) string {
	if method == "" {
		return ""
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.methods[method] {
		return method
	}
	if len(m.methods) >= maxMethodLabels {
		return "other"
	}
	m.methods[method] = true
	return method
}

// handler serves /metrics and /healthz.
func (m *proxyMetrics) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	return mux
}

// listenMetrics listens on the --metrics address addr.
func listenMetrics(ctx context.Context, addr string) (net.Listener, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, listenNetwork(addr), addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics: %w", err)
	}
	return ln, nil
}

// serveMetrics serves m on ln until ctx ends; it returns at once, with
// the address and a function that stops the server.
func serveMetrics(ctx context.Context, ln net.Listener, m *proxyMetrics, logf func(string, ...any)) (string, func()) {
	srv := &http.Server{Handler: m.handler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logf("metrics server: %v", err)
		}
	}()
	stop := func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		<-done
	}
	return ln.Addr().String(), stop
}

// tapeCountersOf reads the open tape's size, the bytes recorded and the
// records lost so far.
func tapeCountersOf(w recordTape) (size, recorded, lost int64) {
	switch t := w.(type) {
	case *tape.Writer:
		st := t.Stats()
		return st.Compressed, st.Bytes, st.Lost
	case *tape.Rotator:
		st := t.Stats()
		return st.Size, st.Bytes, st.Lost
	}
	return 0, 0, 0
}
