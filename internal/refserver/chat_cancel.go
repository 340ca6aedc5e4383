package refserver

import (
	"bytes"
	"context"
	"sync"
)

// chatRuns are the chat streams running, by scope (a session: the stdio
// session, a WebSocket connection, an HTTP session id, "" for clients
// without one) and the key of their call's id, so that the client's
// notifications/cancelled naming a call stops its stream: no further
// chunk and no end result go out, as a cancelled request gets no answer
// (MCP cancellation). The zero value is ready to use.
type chatRuns struct {
	mu   sync.Mutex
	runs map[chatRunKey]*chatRun
}

type chatRunKey struct{ scope, id string }

// chatRun is one running stream.
type chatRun struct{ cancel context.CancelFunc }

// start returns the context of the stream answering the call id of
// scope, derived from ctx and ended by a cancellation, and the function
// to call when the stream ends. A call whose id cannot be keyed (see
// idKey) cannot be cancelled.
func (r *chatRuns) start(ctx context.Context, scope string, id []byte) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	idk, ok := idKey(id)
	if !ok {
		return ctx, cancel
	}
	k, run := chatRunKey{scope, idk}, &chatRun{cancel: cancel}
	r.mu.Lock()
	if r.runs == nil {
		r.runs = map[chatRunKey]*chatRun{}
	}
	r.runs[k] = run // a reused id: the newest call is the one cancelled
	r.mu.Unlock()
	return ctx, func() {
		cancel()
		r.mu.Lock()
		if r.runs[k] == run {
			delete(r.runs, k)
		}
		r.mu.Unlock()
	}
}

// cancelFrom stops the streams of scope that frame, a client's message
// or batch, cancels. Frames that do not mention the method are passed
// over without decoding.
func (r *chatRuns) cancelFrom(scope string, frame []byte) {
	if !bytes.Contains(frame, []byte(`"notifications/cancelled"`)) {
		return
	}
	msgs, _ := decodeWire(bytes.TrimSpace(frame))
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range msgs {
		if m.Method == nil || *m.Method != "notifications/cancelled" || len(m.ID) > 0 {
			continue
		}
		if idk, ok := idKey(m.Params.RequestID); ok {
			if run := r.runs[chatRunKey{scope, idk}]; run != nil {
				run.cancel()
			}
		}
	}
}
