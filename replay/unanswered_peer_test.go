package replay

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/peertest"
	"github.com/mcptape/mcptape/transport"
)

// TestReplayRecordedWithoutAnswerEverything records, against
// server-everything over stdio, a client that ends its input with two
// long-running calls in flight (inspect's client-gone: no answer in the
// tape), and replays the tape against a fresh server-everything: the
// short call is answered live, the long one not within the settle margin,
// and the report says so without calling either a difference.
func TestReplayRecordedWithoutAnswerEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("real peers")
	}
	everything := append(peertest.ServerEverything(t), "stdio")
	toServer, fromServer, finish := stdioProxyGrace(t, 200*time.Millisecond, everything)
	lines := make(chan string, 16)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(fromServer)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	write := func(frames ...string) {
		t.Helper()
		for _, f := range frames {
			if _, err := io.WriteString(toServer, f+"\n"); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	for l := range lines { // server-everything may notify before it answers
		if strings.Contains(l, `"id":1`) {
			break
		}
	}
	write(`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":0.5,"steps":1}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"trigger-long-running-operation","arguments":{"duration":60,"steps":1}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}`)
	for l := range lines {
		if strings.Contains(l, `"id":4`) {
			break
		}
	}
	tapePath := finish() // the client ends its input with calls 2 and 3 in flight
	for range lines {
	}

	rep, err := Run(context.Background(), loadTape(t, tapePath), func(ctx context.Context, _ *Session) (transport.Conn, error) {
		return transport.DialStdio(ctx, everything, transport.WithGrace(300*time.Millisecond))
	}, WithTimeout(20*time.Second), WithSettle(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	s := rep.Sessions[0]
	u := s.Unanswered
	if rep.ExitCode() != 0 || s.Extra != 0 || u == nil || u.Requests != 2 || u.AnsweredLive != 1 || u.NotAnsweredLive != 1 ||
		!strings.Contains(text.String(), "2 requests recorded without an answer: 1 answered live, 1 not") ||
		!strings.Contains(text.String(), "not answered live: tools/call trigger-long-running-operation, recorded id 3") {
		t.Fatalf("exit %d; want 0 and the two calls recorded without an answer, the first answered live:\n%s", rep.ExitCode(), text.String())
	}
}
