// Package refservertest serves the reference server (internal/refserver)
// in-process for the tests of other packages, so that each does not grow a
// copy of the same few lines.
package refservertest

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcptape/mcptape/internal/refserver"
)

// WS describes a reference server served over WebSocket by [WS.Start].
type WS struct {
	// Chat, when enabled (Chunks > 0), adds the chat tool and streams it.
	Chat refserver.Chat
	// TLS serves wss:// with httptest's self-signed certificate.
	TLS bool
	// Options are passed to refserver.New.
	Options []refserver.Option
}

// Start serves the server until the test ends and returns its URL,
// ws://127.0.0.1:PORT/mcp (wss:// with TLS); it is also served at
// refserver.WSPath. A bad option fails the test.
func (w WS) Start(t testing.TB) string {
	t.Helper()
	opts := w.Options
	if w.Chat.Chunks > 0 {
		opts = append(opts[:len(opts):len(opts)], refserver.WithChat(w.Chat))
	}
	s, err := refserver.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	h := refserver.WSHandlerWith(s, refserver.WSConfig{Chat: w.Chat})
	var ts *httptest.Server
	if w.TLS {
		ts = httptest.NewTLSServer(h)
	} else {
		ts = httptest.NewServer(h)
	}
	t.Cleanup(ts.Close)
	return "ws" + strings.TrimPrefix(ts.URL, "http") + refserver.Path
}
