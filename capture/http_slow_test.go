package capture

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestHTTPHeadTimeoutOnce: a request head trickled byte by byte
// (slowloris) is cut the head timeout after its first byte, as net/http
// cuts it, not twice that (the lean path used to hand the late head to
// net/http, which granted the time again); a new connection that sends
// nothing is cut the head timeout after its start, as net/http does, not
// after the wait for an idle connection's next request. On both paths.
func TestHTTPHeadTimeoutOnce(t *testing.T) {
	const timeout = 400 * time.Millisecond
	up := upstream(t, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	trickle := "GET /mcp HTTP/1.1\r\nHost: h\r\nX-Pad: " + strings.Repeat("a", 500)
	tests := []struct {
		name    string
		first   string // a whole request sent first, answered before the trickle
		trickle string
	}{
		{name: "trickled head", trickle: trickle},
		{name: "trickled second head", first: "GET /mcp HTTP/1.1\r\nHost: h\r\n\r\n", trickle: trickle},
		{name: "trickled head after a POST's CRLF", first: "POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}", trickle: "\r\n" + trickle},
		{name: "silent connection"},
	}
	for _, path := range bothPaths {
		rig := startProxy(t, up.URL, append([]HTTPOption{withHeadTimeout(timeout)}, path.opts...)...)
		for _, tt := range tests {
			t.Run(path.name+"/"+tt.name, func(t *testing.T) {
				c := dialRig(t, rig)
				br := bufio.NewReader(c)
				if tt.first != "" {
					rawExchange(t, c, br, tt.first, "GET")
				}
				c.SetDeadline(time.Now().Add(20 * timeout))
				start := time.Now()
				closed := make(chan time.Duration, 1)
				go func() {
					io.Copy(io.Discard, br)
					closed <- time.Since(start)
				}()
				var took time.Duration
			send:
				for i := 0; ; i++ {
					if i < len(tt.trickle) {
						c.Write([]byte{tt.trickle[i]})
					}
					select {
					case took = <-closed:
						break send
					case <-time.After(timeout / 20):
					}
				}
				// Twice the timeout is what the bug allowed. (The first head's time
				// starts with the connection, a little before start.)
				if took < timeout*9/10 || took > timeout*7/4 {
					t.Errorf("the connection closed %v after the head began, want about %v", took.Round(time.Millisecond), timeout)
				}
			})
		}
		rig.stop()
	}
}
