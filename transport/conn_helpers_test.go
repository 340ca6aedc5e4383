package transport

import (
	"context"
	"testing"
	"time"

	"github.com/mcptape/mcptape/internal/syncio"
	"github.com/mcptape/mcptape/jsonrpc"
)

// recvTimeout receives one frame, failing the test after d.
func recvTimeout(t *testing.T, c Conn, d time.Duration) Incoming {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	in, err := c.Recv(ctx)
	if err != nil {
		t.Fatalf("Recv: %v", err)
	}
	return in
}

// recvAnswer receives frames until the response with id idRaw, skipping
// notifications, and returns it.
func recvAnswer(t *testing.T, c Conn, idRaw string) Incoming {
	t.Helper()
	for {
		in := recvTimeout(t, c, 10*time.Second)
		info := jsonrpc.Classify(in.Frame)
		if info.Kind == jsonrpc.KindNotification {
			continue
		}
		if string(info.ID.Raw) != idRaw {
			t.Fatalf("got frame %.200s, want the answer to id %s", in.Frame, idRaw)
		}
		return in
	}
}

// syncBuffer is a buffer safe for a writer and a reader goroutine.
type syncBuffer = syncio.Buffer
