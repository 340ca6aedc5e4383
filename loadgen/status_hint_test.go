package loadgen

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestStatusHint: a POST refused with 404 or 405 by a URL ending in /sse
// (a legacy HTTP+SSE server's stream given as --url) is reported with the
// transport's hint that it goes with --sse, in the error list and in the
// run's failure; a 404 to the server's root says the URL has no path; the
// same status on another path has no hint.
func TestStatusHint(t *testing.T) {
	const hint = "(the stream URL of a legacy HTTP+SSE server? it is given with --sse)"
	tests := []struct {
		path   string
		status int
		want   string // the error's detail
	}{
		{"/sse", http.StatusMethodNotAllowed, "405 Method Not Allowed: nope " + hint},
		{"/sse", http.StatusNotFound, "404 Not Found: nope " + hint},
		{"/mcp", http.StatusNotFound, "404 Not Found: nope"},
		{"", http.StatusNotFound, "404 Not Found: nope (the URL has no path: MCP servers usually answer at one, such as /mcp)"},
	}
	for _, tt := range tests {
		t.Run(tt.path+"/"+http.StatusText(tt.status), func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "nope", tt.status)
			}))
			defer ts.Close()
			rep, err := Run(context.Background(), Target{URL: ts.URL + tt.path}, mustCalls(t, "tools/list"), WithRequests(1))
			if err != nil {
				t.Fatal(err)
			}
			if errorDetail(rep, ClassStatus, tt.want) == 0 {
				t.Errorf("errors %+v, want %s: %s", rep.Errors, ClassStatus, tt.want)
			}
			if !strings.Contains(rep.Failure, tt.want) {
				t.Errorf("failure %q, want it to hold %q", rep.Failure, tt.want)
			}
		})
	}
}
