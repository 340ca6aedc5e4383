//go:build unix

package transport

import (
	"testing"

	"github.com/mcptape/mcptape/internal/peertest"
)

// TestLegacySSEE2E: the 2024-11-05 HTTP+SSE transport against
// server-everything's "sse" mode, whose endpoint event is a relative URL.
func TestLegacySSEE2E(t *testing.T) {
	ctx := e2eContext(t)
	p := peertest.EverythingSSE(t, ctx)
	c, err := DialLegacySSE(ctx, p.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Endpoint() == p.URL {
		t.Errorf("endpoint %q", c.Endpoint())
	}
	handshake(t, ctx, c, "2024-11-05")
	listAndCall(t, ctx, c, "echo", `{"message":"legacy"}`, "Echo: legacy")
	in, _, ex := exchange(t, ctx, c, `{"jsonrpc":"2.0","id":9,"method":"ping"}`, "9")
	if in.Stream != StreamSSE || ex.Status != 202 || in.Exchange != c.GetStream().ID {
		t.Errorf("ping: stream %s, POST status %d, exchange %d", in.Stream, ex.Status, in.Exchange)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}
