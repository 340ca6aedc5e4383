package peertest

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// PostJSON posts one JSON-RPC body to url as a Streamable HTTP client
// does (PostRequest). A nil c is http.DefaultClient. It fails the test
// when the request cannot be made or sent, and returns the answer: the
// caller reads it (ReadAnswer) or closes its body.
func PostJSON(tb testing.TB, c *http.Client, url, session, version, body string) *http.Response {
	tb.Helper()
	req := PostRequest(tb, url, session, version, body)
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		tb.Fatalf("POST %s: %v", url, err)
	}
	return resp
}

// PostRequest returns the POST of one JSON-RPC body to url as a
// Streamable HTTP client makes it: Content-Type application/json, Accept
// application/json and text/event-stream, and Mcp-Session-Id and
// MCP-Protocol-Version when session and version are not empty. It fails
// the test when the request cannot be made.
func PostRequest(tb testing.TB, url, session, version, body string) *http.Request {
	tb.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
	}
	if version != "" {
		req.Header.Set("MCP-Protocol-Version", version)
	}
	return req
}

// ReadAnswer reads and closes an answer's body, and returns it; a read
// error fails the test.
func ReadAnswer(tb testing.TB, resp *http.Response) string {
	tb.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}
