package mock

import (
	"strings"
	"testing"
)

// TestMockIDsByValue: the mock takes ids by value, the one rule of
// jsonrpc.ID.Key that inspect and replay follow: a recorded answer whose
// id is 1.0 answers the recorded request 1 (a server that echoes ids as
// floats), and a live request spelled 2e0 gets its answer under that id.
func TestMockIDsByValue(t *testing.T) {
	m, err := New(loadSessionsOf(t, []string{
		`> {"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`< {"jsonrpc":"2.0","id":0.0,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}`,
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"m":"x"}}}`,
		`< {"jsonrpc":"2.0","id":1.0,"result":{"content":[{"type":"text","text":"recorded x"}]}}`,
	}), WithSpeed(1000))
	if err != nil {
		t.Fatal(err)
	}
	out := converse(t, m,
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":2e0,"method":"tools/call","params":{"name":"echo","arguments":{"m":"x"}}}`)
	got := strings.Join(out, "\n")
	if !strings.Contains(got, `"id":2e0,"result":{"content":[{"type":"text","text":"recorded x"}]}`) || !strings.Contains(got, `"serverInfo"`) {
		t.Errorf("mock answers:\n%s\nwant the recorded initialize answer and the recorded tools/call answer under id 2e0", got)
	}
}
