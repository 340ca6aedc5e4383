package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcptape/mcptape/tape"
	"github.com/mcptape/mcptape/transport"
)

// endingConn is a server that reads the first frame and exits: Recv
// reports the end at once, and Send returns only once the replay asked
// whether the server exited, that is once the reader is describing the
// end (the order a loaded machine may give a stdio server that exits as
// soon as it read its line).
type endingConn struct {
	ended, asked       chan struct{}
	endOnce, askedOnce sync.Once
}

func (c *endingConn) Send(ctx context.Context, _ []byte, _ transport.SendOptions) (*transport.Exchange, error) {
	c.endOnce.Do(func() { close(c.ended) })
	select {
	case <-c.asked:
	case <-time.After(5 * time.Second): // a replay that no longer asks
	case <-ctx.Done():
	}
	return &transport.Exchange{}, nil
}

func (c *endingConn) Recv(ctx context.Context) (transport.Incoming, error) {
	select {
	case <-c.ended:
		return transport.Incoming{}, fmt.Errorf("reading: %w", transport.ErrServerClosed)
	case <-ctx.Done():
		return transport.Incoming{}, ctx.Err()
	}
}

func (c *endingConn) Close() error { return nil }

func (c *endingConn) Exited() <-chan struct{} {
	c.askedOnce.Do(func() { close(c.asked) })
	return c.ended
}

func (c *endingConn) ExitErr() error { return errors.New("exit status 3") }

// TestReplayServerEndsWhileSending checks that a server ending the
// connection before the Send of the request it read returned is still
// said to have ended before answering that request: the request counts as
// sent from before Send.
func TestReplayServerEndsWhileSending(t *testing.T) {
	var buf bytes.Buffer
	w := newTapeBuffer(t, &buf)
	for i, m := range []struct {
		dir   tape.Direction
		frame string
	}{
		{tape.ClientToServer, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`},
		{tape.ServerToClient, initAnswer("1")},
	} {
		w.Write(&tape.Record{Type: tape.TypeMessage, Dir: m.dir, Frame: []byte(m.frame), Time: int64(i+1) * 1000, Session: "s"})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	sessions := loadBytes(t, buf.Bytes())
	conn := &endingConn{ended: make(chan struct{}), asked: make(chan struct{})}
	rep, err := Run(context.Background(), sessions, func(context.Context, *Session) (transport.Conn, error) { return conn, nil }, WithMaxSpeed())
	if err != nil {
		t.Fatal(err)
	}
	const want = "the server closed the connection (exit status 3) before answering step 1 (initialize, recorded id 1)"
	if got := rep.Sessions[0].Error; !strings.Contains(got, want) {
		t.Errorf("error %q, want %q", got, want)
	}
}
