package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/mcptape/mcptape/tape"
)

// lockedBuffer is a bytes.Buffer safe for concurrent writers and readers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// httpRecordRun is "mcptape record" in HTTP mode running in-process.
type httpRecordRun struct {
	stderr *lockedBuffer
	url    string // what the proxy told clients to use
	tape   string
	stop   func() error // ends the run (as SIGINT does) and returns its error
}

// parseHTTPFlags parses args the way "mcptape record" would, with the
// HTTP-mode flags and the few shared ones HTTP mode uses.
func parseHTTPFlags(t testing.TB, args []string) (*httpFlags, *pflag.FlagSet, httpRecordConfig, error) {
	t.Helper()
	fs := pflag.NewFlagSet("record", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	h := declareHTTPFlags(fs)
	var c httpRecordConfig
	fs.StringVarP(&c.Output, "output", "o", "", "")
	fs.DurationVar(&c.Flush, "flush", tape.DefaultFlushInterval, "")
	fs.IntVar(&c.Level, "level", tape.DefaultLevel, "")
	fs.BoolVarP(&c.Verbose, "verbose", "v", false, "")
	err := fs.Parse(args)
	c.Header = tape.Header{Tool: "mcptape", Version: version, Argv: append([]string{"mcptape", "record"}, append(args, "--")...)}
	return h, fs, c, err
}

// startHTTPRecord runs HTTP mode with args and waits for its address.
func startHTTPRecord(t testing.TB, args ...string) *httpRecordRun {
	t.Helper()
	h, fs, c, err := parseHTTPFlags(t, args)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := h.httpMode(fs, fs.Args()); !ok || err != nil {
		t.Fatalf("httpMode: %v %v", ok, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	run := &httpRecordRun{stderr: &lockedBuffer{}, tape: c.Output}
	done := make(chan error, 1)
	go func() {
		done <- runRecordHTTP(ctx, &stdio{in: strings.NewReader(""), out: io.Discard, err: run.stderr}, h, c)
	}()
	var once sync.Once
	var runErr error
	run.stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(20 * time.Second):
				runErr = errors.New("HTTP mode did not stop")
			}
		})
		return runErr
	}
	t.Cleanup(func() { run.stop() })
	re := regexp.MustCompile(`proxying (https?://\S+) to `)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if m := re.FindStringSubmatch(run.stderr.String()); m != nil {
			run.url = m[1]
			return run
		}
		select {
		case err := <-done:
			t.Fatalf("HTTP mode ended: %v\n%s", err, run.stderr)
		default:
		}
	}
	t.Fatalf("no address announced:\n%s", run.stderr)
	return nil
}

// readTapeFile reads a closed tape.
func readTapeFile(t testing.TB, path string) (*tape.Header, []tape.Record) {
	t.Helper()
	r, err := tape.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var recs []tape.Record
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			if w := r.Warning(); w != nil {
				t.Fatalf("tape not closed cleanly: %v", w)
			}
			return r.Header(), recs
		}
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, *rec)
	}
}

// TestRecordHTTPMode runs HTTP mode against an upstream and checks what
// the client got, what the tape holds and what was printed.
func TestRecordHTTPMode(t *testing.T) {
	var gotAuth, gotHost string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.ReadAll(r.Body)
		gotAuth, gotHost = r.Header.Get("Authorization"), r.Host
		w.Header().Set("Mcp-Session-Id", "S1")
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "id: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n")
	}))
	defer up.Close()
	tp := filepath.Join(t.TempDir(), "h.jsonl.zst")
	run := startHTTPRecord(t, "--listen", "127.0.0.1:0", "--upstream", up.URL+"/mcp?token=abc123", "-o", tp,
		"--redact-header", "X-Tenant", "-v")
	if !strings.HasSuffix(run.url, "/mcp") || !strings.Contains(run.stderr.String(), "token=%3Credacted") {
		t.Fatalf("announcement:\n%s", run.stderr)
	}
	req, _ := http.NewRequest("POST", run.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize"}`))
	req.Header.Set("Authorization", "Bearer sekret-value")
	req.Header.Set("X-Tenant", "acme")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(body, []byte(`"result":{}`)) || gotAuth != "Bearer sekret-value" || gotHost != strings.TrimPrefix(up.URL, "http://") {
		t.Fatalf("client got %q; upstream got Authorization %q, Host %q", body, gotAuth, gotHost)
	}
	if err := run.stop(); err != nil {
		t.Fatalf("run: %v\n%s", err, run.stderr)
	}
	if fi, err := os.Stat(tp); err != nil || !privateMode(fi) {
		t.Fatalf("tape file: %v %v", fi, err)
	}
	hdr, recs := readTapeFile(t, tp)
	if hdr.Transport != "http" || !strings.Contains(hdr.Target, "token=%3Credacted") || strings.Contains(string(hdr.Extra), "abc123") {
		t.Errorf("header %+v %s", hdr, hdr.Extra)
	}
	var all strings.Builder
	var messages int
	for _, r := range recs {
		all.Write(r.Data)
		if r.Type == tape.TypeMessage {
			messages++
			if r.Session != "S1" {
				t.Errorf("message in session %q", r.Session)
			}
		}
	}
	if messages != 2 {
		t.Errorf("%d messages recorded", messages)
	}
	for _, secret := range []string{"sekret-value", "acme", "abc123"} {
		if strings.Contains(all.String(), secret) {
			t.Errorf("the tape holds %q", secret)
		}
	}
	if !strings.Contains(run.stderr.String(), "1 exchange, 1 client and 1 server message") {
		t.Errorf("verbose summary missing:\n%s", run.stderr)
	}
}

// TestRecordHTTPLevel records the same 500 exchanges at zstd levels 1 and
// 19 in HTTP mode: both tapes hold every message, and the higher level's
// is at least 5 % smaller (--level reaches the tape writer in this mode
// too). --flush 1h makes each tape one frame, as in TestRecordLevel.
func TestRecordHTTPLevel(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(bytes.Replace(body, []byte(`"method":"ping"`), []byte(`"result":{}`), 1))
	}))
	defer up.Close()
	checkLevels(t, 2*500, func(level, tp string) {
		run := startHTTPRecord(t, "--listen", "127.0.0.1:0", "--upstream", up.URL+"/mcp", "-o", tp, "--level", level, "--flush", "1h")
		for i := range 500 {
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"note":"%x"}}`, i, i*7919)
			resp, err := http.Post(run.url, "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if err := run.stop(); err != nil {
			t.Fatalf("level %s: %v\n%s", level, err, run.stderr)
		}
	})
}

// TestRecordHTTPAllInterfaces: listening beyond loopback is allowed, with a
// warning, for --metrics as for --listen (--metrics had none) and each
// alone.
func TestRecordHTTPAllInterfaces(t *testing.T) {
	up := httptest.NewServer(http.NotFoundHandler())
	defer up.Close()
	const (
		listenWarning  = "warning: listening on 0.0.0.0:"
		metricsWarning = "warning: --metrics listening on 0.0.0.0:"
	)
	for _, tt := range []struct {
		listen, metrics string
		want, dontWant  string
	}{
		{"0.0.0.0:0", "127.0.0.1:0", listenWarning, metricsWarning},
		{"127.0.0.1:0", "0.0.0.0:0", metricsWarning, listenWarning},
	} {
		run := startHTTPRecord(t, "--listen", tt.listen, "--metrics", tt.metrics, "--upstream", up.URL, "-o", filepath.Join(t.TempDir(), "t.jsonl.zst"))
		if err := run.stop(); err != nil {
			t.Fatal(err)
		}
		if got := run.stderr.String(); !strings.Contains(got, tt.want) || strings.Contains(got, tt.dontWant) ||
			!strings.Contains(got, "which other machines can reach: anyone who can connect") {
			t.Errorf("--listen %s --metrics %s: want %q and not %q:\n%s", tt.listen, tt.metrics, tt.want, tt.dontWant, got)
		}
	}
	quiet := startHTTPRecord(t, "--listen", "0", "--metrics", "0", "--upstream", up.URL, "-o", filepath.Join(t.TempDir(), "t.jsonl.zst"))
	if strings.Contains(quiet.stderr.String(), "warning") || !strings.Contains(quiet.url, "127.0.0.1:") {
		t.Errorf("loopback listen: %s\n%s", quiet.url, quiet.stderr)
	}
}

func TestRecordHTTPUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"listen without upstream", []string{"--listen", "127.0.0.1:0", "--", "srv"}, "--listen needs --upstream"},
		{"no-redact without upstream", []string{"--no-redact"}, "--no-redact needs --upstream"},
		{"upstream and command", []string{"--upstream", "http://h/mcp", "--", "srv"}, "give one or the other"},
		{"contradiction", []string{"--upstream", "http://h/mcp", "--no-redact", "--redact-header", "X-A"}, "contradict"},
		{"bad upstream", []string{"--upstream", "ftp://h/mcp"}, "want an http:// or https:// URL"},
		{"bad listen", []string{"--upstream", "http://h/mcp", "--listen", "nowhere"}, `--listen "nowhere"`},
		{"bad header", []string{"--upstream", "http://h/mcp", "--redact-header", "X Y"}, `"X Y"`},
		{"zero max decoded", []string{"--upstream", "http://h/mcp", "--max-decoded-mib", "0"}, "--max-decoded-mib 0"},
		{"zero decode budget", []string{"--upstream", "http://h/mcp", "--decode-budget-mib", "0"}, "--decode-budget-mib 0"},
		{"max decoded without upstream", []string{"--max-decoded-mib", "4", "--", "srv"}, "--max-decoded-mib needs --upstream"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, fs, c, err := parseHTTPFlags(t, tt.args)
			if err != nil {
				t.Fatal(err)
			}
			c.Output = filepath.Join(t.TempDir(), "never.jsonl.zst")
			ok, err := h.httpMode(fs, fs.Args())
			if err == nil && ok {
				err = runRecordHTTP(context.Background(), &stdio{out: io.Discard, err: io.Discard}, h, c)
			}
			var ee *exitError
			if err == nil || !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want a usage error containing %q", err, tt.want)
			}
			if _, statErr := os.Stat(c.Output); statErr == nil {
				t.Errorf("a tape was created for a usage error")
			}
		})
	}
	h, fs, _, _ := parseHTTPFlags(t, []string{"--", "srv"})
	if ok, err := h.httpMode(fs, fs.Args()); ok || err != nil {
		t.Errorf("stdio command line: %v %v", ok, err)
	}
}

// TestRecordHTTPHeader: the tape header names the upstream, not a command.
func TestRecordHTTPHeader(t *testing.T) {
	f := &httpFlags{upstream: "https://u:pw@mcp.example.com/mcp", redactHeaders: []string{"X-A"}}
	h := httpHeader(tape.Header{Argv: []string{"mcptape", "record", "--upstream=https://u:pw@mcp.example.com/mcp", "--"}}, f, "127.0.0.1:8931", time.Unix(1, 0))
	var extra map[string]any
	json.Unmarshal(h.Extra, &extra)
	if h.Transport != "http" || strings.Contains(h.Target, "pw@") || h.Argv[len(h.Argv)-1] == "--" || extra["listen"] != "127.0.0.1:8931" || h.Time != 1e9 {
		t.Errorf("header %+v extra %v", h, extra)
	}
	if got := fmt.Sprint(extra["redact_headers"]); got != "[X-A]" {
		t.Errorf("redact_headers %s", got)
	}
}
