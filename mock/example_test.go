package mock_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcptape/mcptape/mock"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/tape"
)

// Example serves a recorded session over stdio-style streams: the live
// request gets the recorded answer under its own id, and a question the
// recording never heard gets an error naming the closest recorded one.
func Example() {
	r, err := tape.Open(filepath.Join("..", "testdata", "tapes", "basic.jsonl.zst"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	sessions, _, err := replay.Load(r)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := mock.New(sessions, mock.WithMaxSpeed())
	if err != nil {
		fmt.Println(err)
		return
	}
	in := strings.NewReader(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"echo","arguments":{"message":"héllo, wörld"}}}` + "\n")
	if err := m.ServeStdio(context.Background(), in, os.Stdout); err != nil {
		fmt.Println(err)
	}
	in = strings.NewReader(`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"echo","arguments":{"message":"hi"}}}` + "\n")
	if err := m.ServeStdio(context.Background(), in, os.Stdout); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"jsonrpc":"2.0","id":"a","result":{"content":[{"type":"text","text":"héllo, wörld"}]}}
	// {"jsonrpc":"2.0","id":"b","error":{"code":-32602,"message":"mcptape mock: no recorded answer for tools/call \"echo\": closest recorded request is record 12, tools/call \"echo\": params.arguments.message: recorded \"héllo, wörld\", got \"hi\""}}
}
