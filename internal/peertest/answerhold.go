package peertest

import (
	"bytes"
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// AnswerHold makes a Go SDK client's cancel of a call deterministic. A
// test that cancels a call on its first progress races the server's
// answer: the go-sdk everything-server answers test_tool_with_progress
// 150 ms after its first progress, and a test goroutine that woke later
// cancelled a call already answered, for which the SDK sends no
// notifications/cancelled (and the call returns no error). The
// connections of Transport hold back the answer to the client's call
// whose params contain the marker until Release; CancelSent is closed once
// the client has tried to write a notifications/cancelled (the SDK writes
// it from a goroutine of its own, which a Close could otherwise beat).
type AnswerHold struct {
	marker   []byte
	released chan struct{}
	sent     chan struct{}

	mu      sync.Mutex
	id      jsonrpc.ID // of the call with the marker
	call    bool       // id is set
	release sync.Once
	cancel  sync.Once
}

// NewAnswerHold returns an AnswerHold for the call whose params contain
// marker (a progress token, say).
func NewAnswerHold(marker string) *AnswerHold {
	return &AnswerHold{marker: []byte(marker), released: make(chan struct{}), sent: make(chan struct{})}
}

// Transport wraps a client transport.
func (h *AnswerHold) Transport(t mcp.Transport) mcp.Transport { return &holdTransport{t, h} }

// Release lets the held answer through; call it once the cancelled call
// has returned. It is idempotent.
func (h *AnswerHold) Release() { h.release.Do(func() { close(h.released) }) }

// CancelSent is closed once the client has written (or failed to write)
// a notifications/cancelled.
func (h *AnswerHold) CancelSent() <-chan struct{} { return h.sent }

// holds reports whether msg is the answer to the call with the marker.
func (h *AnswerHold) holds(msg jsonrpc.Message) bool {
	r, ok := msg.(*jsonrpc.Response)
	if !ok {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.call && r.ID == h.id
}

type holdTransport struct {
	mcp.Transport
	h *AnswerHold
}

func (t *holdTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	conn, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &holdConn{conn, t.h}, nil
}

type holdConn struct {
	mcp.Connection
	h *AnswerHold
}

func (c *holdConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil && c.h.holds(msg) {
		select {
		case <-c.h.released:
		case <-ctx.Done():
		}
	}
	return msg, err
}

func (c *holdConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	req, _ := msg.(*jsonrpc.Request)
	if req != nil && req.IsCall() && bytes.Contains(req.Params, c.h.marker) {
		c.h.mu.Lock()
		c.h.id, c.h.call = req.ID, true
		c.h.mu.Unlock()
	}
	err := c.Connection.Write(ctx, msg)
	if req != nil && req.Method == "notifications/cancelled" {
		c.h.cancel.Do(func() { close(c.h.sent) })
	}
	return err
}
