package peertest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
)

// HoldFront serves a reverse proxy to upstream, a Streamable HTTP MCP
// server, and returns its URL (upstream's path on the proxy's host). The
// SSE answer to a POST whose body contains marker is passed on up to the
// line with its first "result", and the rest only once release is closed
// or the request ends (a nil release: the request's end). A recording proxy in front of it sees the answer
// whatever the client does: this way a test's cancel of that call reaches
// the recording proxy before the answer, however late the test is.
func HoldFront(t testing.TB, upstream, marker string, release <-chan struct{}) string {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host}) // paths as they come
	rp.FlushInterval = -1
	rp.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Context().Value(holdKey{}) != nil {
			resp.Body = &holdBody{ReadCloser: resp.Body, ctx: resp.Request.Context(), release: release}
		}
		return nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
			if bytes.Contains(body, []byte(marker)) {
				r = r.WithContext(context.WithValue(r.Context(), holdKey{}, true))
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + u.Path
}

// holdKey marks the request whose answer HoldFront holds back.
type holdKey struct{}

// holdBody passes on a response body up to the line with the first
// "result", then waits for release (or the request's end) before the rest.
type holdBody struct {
	io.ReadCloser
	ctx     context.Context
	release <-chan struct{}
	cut     bool   // the line with the result is found
	waited  bool   // for release
	rest    []byte // from that line, not passed on yet
	err     error  // the read error that came with rest
}

func (h *holdBody) Read(p []byte) (int, error) {
	if h.cut {
		if !h.waited {
			select {
			case <-h.release: // a nil release: until the request ends
			case <-h.ctx.Done():
			}
			h.waited = true
		}
		if len(h.rest) > 0 {
			n := copy(p, h.rest)
			h.rest = h.rest[n:]
			return n, nil
		}
		if h.err != nil {
			return 0, h.err
		}
		return h.ReadCloser.Read(p)
	}
	n, err := h.ReadCloser.Read(p)
	i := bytes.Index(p[:n], []byte(`"result"`))
	if i < 0 {
		return n, err
	}
	start := bytes.LastIndexByte(p[:i], '\n') + 1
	h.cut, h.rest, h.err = true, append([]byte(nil), p[start:n]...), err
	if start == 0 {
		return h.Read(p)
	}
	return start, nil
}
