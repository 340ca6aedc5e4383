package analysis

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
)

// cancelToken is the progress token of the call that cancelAfterProgress
// cancels.
const cancelToken = "cancel-me"

// canceller lets a Go SDK client cancel a call after its first progress
// notification, whatever the scheduling, so that the tape holds the
// cancel (TestRealPeers/gosdk-everything once recorded none:
// cancellations Count 0). Its transport holds back the answer to the call
// until the call has returned (peertest.AnswerHold); over HTTP,
// peertest.HoldFront holds it back before the recording proxy.
type canceller struct {
	progress chan string // tokens of the client's progress notifications
	hold     *peertest.AnswerHold
}

func newCanceller() *canceller {
	return &canceller{progress: make(chan string, 100), hold: peertest.NewAnswerHold(`"` + cancelToken + `"`)}
}

// progressHandler is the client's ProgressNotificationHandler.
func (c *canceller) progressHandler(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	select {
	case c.progress <- fmt.Sprint(req.Params.ProgressToken):
	default:
	}
}

// transport wraps the client's transport.
func (c *canceller) transport(t mcp.Transport) mcp.Transport { return c.hold.Transport(t) }

// cancelAfterProgress calls a tool with cancelToken and cancels the call
// when the first progress notification for that token arrives (the SDK
// may hand over a notification of an earlier call after that call
// returned: a cancel on it would stop this call before it was sent); it
// returns once the cancel is written.
func (c *canceller) cancelAfterProgress(t *testing.T, ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		p := &mcp.CallToolParams{Name: name, Arguments: args}
		p.SetProgressToken(cancelToken)
		_, err := cs.CallTool(cctx, p)
		done <- err
	}()
	timeout := time.After(20 * time.Second)
	for waiting := true; waiting; {
		select {
		case tok := <-c.progress:
			waiting = tok != cancelToken
		case <-timeout:
			t.Fatal("no progress before the cancel")
		}
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("the cancelled call returned no error")
	}
	c.hold.Release()
	select {
	case <-c.hold.CancelSent():
	case <-time.After(20 * time.Second):
		t.Fatal("the client did not send the cancel")
	}
}
