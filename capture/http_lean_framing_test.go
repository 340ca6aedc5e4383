package capture

// Tests of the response framing on the lean path's way back to the client:
// a response whose framing says its body is complete ends at once, and the
// head the client gets is framed as net/http's server would frame it.

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"testing"
)

// TestHTTPLeanEmptyStreamEnds: an upstream answer with an event-stream
// Content-Type and "Content-Length: 0" (the Go SDK's answer when a stream
// is closed before its first event) is complete: the next request on the
// client's keep-alive connection is forwarded and answered, both
// exchanges are recorded with their "response" event, and their "end"
// says the server ended them. For POST, GET and DELETE, with 200, 202 and
// 404, on both paths.
func TestHTTPLeanEmptyStreamEnds(t *testing.T) {
	for _, path := range bothPaths {
		for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
			for _, code := range []int{200, 202, 404} {
				t.Run(fmt.Sprintf("%s/%s/%d", path.name, method, code), func(t *testing.T) {
					up := startRawUpstream(t, func(_ net.Conn, r *http.Request) string {
						if r.URL.Path == "/first" {
							return fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Type: text/event-stream\r\nContent-Length: 0\r\n\r\n",
								code, http.StatusText(code))
						}
						return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"ok\":true}"
					})
					rig := startProxy(t, up.url(), path.opts...)
					c := dialRig(t, rig)
					br := bufio.NewReader(c)
					body := ""
					if method == http.MethodPost {
						body = "{}"
					}
					req := func(p string) string {
						return fmt.Sprintf("%s %s HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n%s", method, p, len(body), body)
					}
					resp, got := rawExchange(t, c, br, req("/first"), method)
					if resp.StatusCode != code || got != "" || resp.ContentLength != 0 {
						t.Fatalf("first response: %d, length %d, %q; want %d, empty", resp.StatusCode, resp.ContentLength, got, code)
					}
					resp, got = rawExchange(t, c, br, req("/second"), method)
					if resp.StatusCode != 200 || got != `{"ok":true}` {
						t.Fatalf("second response: %d %q", resp.StatusCode, got)
					}
					recs := waitEnded(t, rig, 2)
					if n := len(httpEvents(t, recs, "response")); n != 2 {
						t.Errorf("%d response events, want 2", n)
					}
					for x := uint64(1); x <= 2; x++ {
						end, ok := endEventOf(t, recs, x)
						if !ok {
							t.Fatalf("no end event of exchange %d", x)
						}
						if end.ClosedBy != ClosedByServer || end.Error != "" {
							t.Errorf("exchange %d ended by %q (%q), want %q", x, end.ClosedBy, end.Error, ClosedByServer)
						}
					}
				})
			}
		}
	}
}
