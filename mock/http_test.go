package mock

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestMockDropHTTP: over Streamable HTTP a dropped request's stream ends,
// with no answer on it, instead of staying open until the client leaves;
// the rest of the session is served as before.
func TestMockDropHTTP(t *testing.T) {
	m := newMock(t, []string{
		"> " + batchInit, "< " + batchInitResp,
		`> {"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`< {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`,
	}, WithFaults(Faults{DropRate: 1, Seed: 1}))
	ms := httptest.NewServer(m.HTTPHandler(HTTPConfig{Stateless: true}))
	defer ms.Close()
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/list"}`,
		`[{"jsonrpc":"2.0","id":8,"method":"tools/list"}]`,
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ms.URL+Path, strings.NewReader(body))
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		if err != nil {
			t.Fatalf("%s: the stream of a dropped request did not end: %v", body, err)
		}
		if resp.StatusCode != http.StatusOK || strings.Contains(string(data), "data:") {
			t.Errorf("%s: status %d, body %q; want 200 and no message", body, resp.StatusCode, data)
		}
	}
}

// TestMockEmptyBatchHTTP: an empty batch POSTed gets 400 and one Invalid
// Request error (not 202 and nothing), with a session or without.
func TestMockEmptyBatchHTTP(t *testing.T) {
	m := newMock(t, []string{"> " + batchInit, "< " + batchInitResp})
	for _, cfg := range []HTTPConfig{{}, {Stateless: true}} {
		ms := httptest.NewServer(m.HTTPHandler(cfg))
		resp := postMCP(t, t.Context(), ms.URL+Path, `[]`, "")
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		ms.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: empty batch"}}`
		if resp.StatusCode != http.StatusBadRequest || strings.TrimSpace(string(data)) != want {
			t.Errorf("stateless %v: status %d, body %q; want 400 %s", cfg.Stateless, resp.StatusCode, data, want)
		}
	}
}
