package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/mcptape/mcptape/internal/peertest"
)

// TestRecordMetrics scrapes --metrics with the Prometheus library's own
// text parser after known traffic: exchanges by status, messages by
// direction and method, bytes, latency histograms, the tape's size, open
// sessions and streams; and /healthz answers.
func TestRecordMetrics(t *testing.T) {
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case r.Method == http.MethodGet: // a stream held open until released
			w.Header().Set("Content-Type", "text/event-stream")
			w.(http.Flusher).Flush()
			<-release
		case strings.Contains(string(body), "boom"):
			w.WriteHeader(http.StatusInternalServerError)
		default:
			w.Header().Set("Mcp-Session-Id", "S1")
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{}}`)
		}
	}))
	defer up.Close()
	defer close(release)
	tp := filepath.Join(t.TempDir(), "m.jsonl.zst")
	run := startHTTPRecord(t, "--listen", "127.0.0.1:0", "--upstream", up.URL+"/mcp", "-o", tp, "--metrics", "127.0.0.1:0", "--flush", "10ms")
	m := regexp.MustCompile(`metrics on (http://\S+)/metrics`).FindStringSubmatch(run.stderr.String())
	if m == nil {
		t.Fatalf("no metrics address announced:\n%s", run.stderr)
	}
	base := m[1]
	post := func(body string) { peertest.ReadAnswer(t, peertest.PostJSON(t, nil, run.url, "S1", "", body)) }
	for range 3 {
		post(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`)
	}
	post(`{"jsonrpc":"2.0","id":2,"method":"boom"}`)
	stream, err := http.Get(run.url) // stays open
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()

	fams := scrape(t, base+"/metrics")
	value := func(name string, labels map[string]string) float64 {
		t.Helper()
		f := fams[name]
		if f == nil {
			t.Fatalf("no %s in the scrape", name)
		}
	next:
		for _, mt := range f.Metric {
			for _, lp := range mt.Label {
				if want, ok := labels[lp.GetName()]; ok && want != lp.GetValue() {
					continue next
				}
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				return mt.Counter.GetValue()
			case dto.MetricType_GAUGE:
				return mt.Gauge.GetValue()
			case dto.MetricType_HISTOGRAM:
				return float64(mt.Histogram.GetSampleCount())
			}
		}
		t.Fatalf("%s%v: no such series", name, labels)
		return 0
	}
	for _, c := range []struct {
		name    string
		labels  map[string]string
		want    float64
		atLeast bool
	}{
		{"mcptape_exchanges_total", map[string]string{"status": "200"}, 3, false},
		{"mcptape_exchanges_total", map[string]string{"status": "500"}, 1, false},
		{"mcptape_messages_total", map[string]string{"direction": "c2s", "kind": "request", "method": "tools/call"}, 3, false},
		{"mcptape_messages_total", map[string]string{"direction": "s2c", "kind": "response", "method": "tools/call"}, 3, false},
		{"mcptape_messages_total", map[string]string{"direction": "c2s", "method": "boom"}, 1, false},
		{"mcptape_forwarded_bytes_total", map[string]string{"direction": "c2s"}, float64(3*len(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x"}}`) + len(`{"jsonrpc":"2.0","id":2,"method":"boom"}`)), false},
		{"mcptape_forwarded_bytes_total", map[string]string{"direction": "s2c"}, float64(3 * len(`{"jsonrpc":"2.0","id":1,"result":{}}`)), false},
		{"mcptape_upstream_seconds", nil, 4, false},
		{"mcptape_proxy_overhead_seconds", nil, 4, false},
		{"mcptape_open_sessions", nil, 1, false},
		{"mcptape_open_streams", nil, 1, false},
		{"mcptape_recorded_bytes_total", nil, 1, true},
		{"mcptape_tape_bytes", nil, 1, true},
		{"mcptape_records_lost_total", nil, 0, false},
		{"mcptape_records_unrecorded_total", nil, 0, false},
		{"mcptape_messages_cut_total", nil, 0, false},
	} {
		got := value(c.name, c.labels)
		if (c.atLeast && got < c.want) || (!c.atLeast && got != c.want) {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	resp, err := http.Get(base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "ok\n" {
		t.Errorf("/healthz: %d %q", resp.StatusCode, body)
	}
}

// scrape fetches url and parses it with the Prometheus text parser.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("content type %q", ct)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("the scrape does not parse: %v", err)
	}
	return fams
}

func TestMetricsMethodLabelsBounded(t *testing.T) {
	m := newProxyMetrics(nil, nil)
	for i := range maxMethodLabels + 10 {
		m.methodLabel(fmt.Sprint("m", i))
	}
	if got := m.methodLabel("new"); got != "other" {
		t.Errorf("label past the bound: %q", got)
	}
	if got := m.methodLabel("m3"); got != "m3" {
		t.Errorf("known label: %q", got)
	}
}

// TestRecordBusyAddress: a --listen or --metrics address in use is one
// line of error and leaves no tape behind (one left by --metrics made the
// same command, run again once the address was free, fail: the -o file
// existed).
func TestRecordBusyAddress(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tests := []struct {
		name string
		args []string
	}{
		{name: "listen", args: []string{"--listen", busy.Addr().String()}},
		{name: "metrics", args: []string{"--listen", "127.0.0.1:0", "--metrics", busy.Addr().String()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp := filepath.Join(t.TempDir(), "t.jsonl.zst")
			args := append([]string{"record", "--upstream", "http://127.0.0.1:1/mcp", "-o", tp}, tt.args...)
			code, _, stderr := runCLI(t, "", args...)
			if code == 0 || !strings.Contains(stderr, "address already in use") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
				t.Errorf("exit code %d, stderr %q: want a failure, one line", code, stderr)
			}
			if _, err := os.Stat(tp); err == nil {
				t.Errorf("tape %s left behind", tp)
			}
		})
	}
}
