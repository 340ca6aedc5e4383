package mock

import (
	"strings"
	"testing"
)

// TestMockPlaysStreamedParts: an answer recorded as several results under
// one id (start, deltas, end) is played back part by part under the live
// id, not as replay's joined message.
func TestMockPlaysStreamedParts(t *testing.T) {
	m, err := New(loadSessionsOf(t, []string{
		`> {"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chat","arguments":{"query":"q"}}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"type":"content_start"}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"type":"content_delta","delta":"a"}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"type":"content_delta","delta":"b"}}`,
		`< {"jsonrpc":"2.0","id":1,"result":{"type":"content_end","usage":{"total_tokens":2}}}`,
	}), WithMaxSpeed())
	if err != nil {
		t.Fatal(err)
	}
	got := converse(t, m, `{"jsonrpc":"2.0","id":"live","method":"tools/call","params":{"name":"chat","arguments":{"query":"q"}}}`)
	want := []string{`"type":"content_start"`, `"delta":"a"`, `"delta":"b"`, `"type":"content_end"`}
	if len(got) != len(want) {
		t.Fatalf("%d frames, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i, g := range got {
		if !strings.Contains(g, `"id":"live"`) || !strings.Contains(g, want[i]) {
			t.Errorf("frame %d = %s, want the live id and %s", i, g, want[i])
		}
	}
}
