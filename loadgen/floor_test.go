package loadgen

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// buildFloor builds the benchmark's floor (testdata/floor, see
// scripts/bench-load.sh) and returns the program's path.
func buildFloor(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "floor")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/floor").CombinedOutput(); err != nil {
		t.Fatalf("building the floor: %v\n%s", err, out)
	}
	return bin
}

// TestFloor checks that the benchmark's floor does the work it stands
// for: every answer read to the end of its framing (Content-Length,
// chunked with a trailer, an event stream), one request per answer, the
// request bytes the load client sends; and that an answer it cannot
// count ends the run with a one-line error.
func TestFloor(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the floor")
	}
	bin := buildFloor(t)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`
	bodyFile := filepath.Join(t.TempDir(), "body.json")
	if err := os.WriteFile(bodyFile, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	answer := `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}`
	tests := []struct {
		name   string
		answer func(w http.ResponseWriter)
		fails  string // the error expected, "" for a good run
	}{
		{"content length", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", fmt.Sprint(len(answer)))
			w.Write([]byte(answer))
		}, ""},
		{"chunked with a trailer", func(w http.ResponseWriter) {
			w.Header().Set("Trailer", "X-Sum")
			w.Write([]byte(answer[:10]))
			w.(http.Flusher).Flush()
			w.Write([]byte(answer[10:]))
			w.Header().Set("X-Sum", "1")
		}, ""},
		{"event stream", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "id: 1\ndata: \n\n")
			w.(http.Flusher).Flush()
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", answer)
		}, ""},
		{"error status", func(w http.ResponseWriter) {
			http.Error(w, "no", http.StatusInternalServerError)
		}, `answer "HTTP/1.1 500 Internal Server Error", want HTTP/1.1 2xx`},
		{"connection close", func(w http.ResponseWriter) {
			w.Header().Set("Connection", "close")
			w.Write([]byte(answer))
		}, "Connection: close"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var served, bad atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				served.Add(1)
				b := make([]byte, 1024)
				n, _ := r.Body.Read(b)
				if r.Method != http.MethodPost || string(b[:n]) != body || r.UserAgent() != "Go-http-client/1.1" ||
					r.Header.Get("Accept") != "application/json, text/event-stream" || r.Header.Get("Mcp-Protocol-Version") != "2025-06-18" {
					bad.Add(1)
				}
				tc.answer(w)
			}))
			defer srv.Close()
			out, err := exec.Command(bin, "-url", srv.URL+"/mcp", "-c", "4", "-d", "300ms", "-body", bodyFile,
				"-H", "Content-Type: application/json", "-H", "Accept: application/json, text/event-stream",
				"-H", "Mcp-Protocol-Version: 2025-06-18").Output()
			if tc.fails != "" {
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(ee.Stderr), tc.fails) ||
					strings.Count(strings.TrimSpace(string(ee.Stderr)), "\n") != 0 {
					t.Fatalf("got %v, stderr %q; want exit 1 with one line saying %q", err, stderrOf(err), tc.fails)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v: %s", err, stderrOf(err))
			}
			var n int64
			var secs float64
			if _, err := fmt.Sscanf(string(out), "%d %g", &n, &secs); err != nil {
				t.Fatalf("output %q: %v", out, err)
			}
			if n < 4 || n != served.Load() || secs <= 0 {
				t.Errorf("floor read %d answers in %gs, the server gave %d", n, secs, served.Load())
			}
			if bad.Load() != 0 {
				t.Errorf("%d requests were not the load client's POST", bad.Load())
			}
		})
	}
}

// stderrOf returns the standard error an *exec.ExitError kept.
func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(ee.Stderr)
	}
	return ""
}
