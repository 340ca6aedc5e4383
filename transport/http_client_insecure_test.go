package transport

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestInsecureTLS: a client made with WithInsecureTLS accepts a
// self-signed certificate, one made without it refuses it.
func TestInsecureTLS(t *testing.T) {
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer ts.Close()
	for _, insecure := range []bool{false, true} {
		var opts []ClientOption
		if insecure {
			opts = append(opts, WithInsecureTLS())
		}
		c, err := NewHTTPClient(0, opts...)
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, ts.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		if (err == nil) != insecure {
			t.Errorf("insecure %v: %v", insecure, err)
		}
		c.CloseIdleConnections()
	}
}
