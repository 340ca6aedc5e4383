package peertest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
)

// CancelOrder is a Streamable HTTP MCP server (no session id) that notes
// the order in which it reads calls and cancellations, and never answers
// a call: with HeldHeads it holds the call's headers too, else it sends
// them at once and holds the event stream, until the client goes away.
// In a batch (2025-03-26), it notes the cancellations and answers every
// request at once with an empty result. Tests of a client cancelling a
// call on another connection than the call's POST (loadgen, replay) use
// it with a HeldCalls dialer.
type CancelOrder struct {
	HeldHeads bool
	mu        sync.Mutex
	seen      []string // "call ID", "cancel ID", in the order read
}

// ServeHTTP answers initialize (with the version asked for), notes and
// holds a call, notes a cancel (202), and takes a batch (batch).
func (o *CancelOrder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	info := jsonrpc.Classify(body)
	switch {
	case info.Kind == jsonrpc.KindBatch:
		o.batch(w, body)
	case info.Kind == jsonrpc.KindRequest && info.Method == "initialize":
		var init struct {
			Params struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"params"`
		}
		version := "2025-06-18"
		if json.Unmarshal(body, &init) == nil && init.Params.ProtocolVersion != "" {
			version = init.Params.ProtocolVersion
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"order","version":"1"}}}`, info.ID.Raw, version)
	case info.Kind == jsonrpc.KindRequest:
		o.note("call " + info.ID.Key())
		if !o.HeldHeads {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			http.NewResponseController(w).Flush()
		}
		<-r.Context().Done() // the client closes the stream
	default:
		if info.Method == jsonrpc.MethodCancelled {
			o.note("cancel " + info.CancelTarget.Key())
		}
		w.WriteHeader(http.StatusAccepted)
	}
}

// batch notes the cancellations of a batch body and answers its requests
// with empty results, in one JSON array (202 when it holds none).
func (o *CancelOrder) batch(w http.ResponseWriter, body []byte) {
	members, err := jsonrpc.Split(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var answers [][]byte
	for _, m := range members {
		info := jsonrpc.Classify(m)
		switch {
		case info.Kind == jsonrpc.KindRequest:
			answers = append(answers, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{}}`, info.ID.Raw))
		case info.Method == jsonrpc.MethodCancelled:
			o.note("cancel " + info.CancelTarget.Key())
		}
	}
	if len(answers) == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(append(append([]byte{'['}, bytes.Join(answers, []byte{','})...), ']'))
}

func (o *CancelOrder) note(s string) {
	o.mu.Lock()
	o.seen = append(o.seen, s)
	o.mu.Unlock()
}

// Order reports whether the server read the first call before the cancel
// naming it; an error when it read no call, or no cancel of that call.
func (o *CancelOrder) Order() (callFirst bool, err error) {
	o.mu.Lock()
	seen := slices.Clone(o.seen)
	o.mu.Unlock()
	call := slices.IndexFunc(seen, func(s string) bool { return strings.HasPrefix(s, "call ") })
	if call < 0 {
		return false, fmt.Errorf("server read %q: no call", seen)
	}
	cancel := slices.Index(seen, "cancel "+strings.TrimPrefix(seen[call], "call "))
	if cancel < 0 {
		return false, fmt.Errorf("server read %q: no cancel of the call", seen)
	}
	return call < cancel, nil
}

// HeldCalls is a dialer whose connections hold every write of a
// tools/call request for Hold (or until the connection is closed) before
// it goes out, as a loaded machine or a slow link may, and note when the
// call's write begins (after the hold) and ends, and when a cancel's
// write begins.
type HeldCalls struct {
	Hold                   time.Duration
	mu                     sync.Mutex
	writing, wrote, cancel time.Time
}

// DialContext dials TCP and wraps the connection; it is an
// http.Transport's DialContext.
func (h *HeldCalls) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &heldCallConn{Conn: nc, h: h, closed: make(chan struct{})}, nil
}

// Times returns when the call's write began (after the hold) and ended,
// and when a cancel's write began; zero when it did not happen.
func (h *HeldCalls) Times() (writing, wrote, cancel time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.writing, h.wrote, h.cancel
}

// CancelAfterWrite returns an error unless a cancel was written after the
// call's write began and, when grace is not zero, at least grace after it
// ended (a client that waits for the answer's headers may send it sooner,
// and a server holding them lets only the grace pass).
func (h *HeldCalls) CancelAfterWrite(grace time.Duration) error {
	writing, wrote, cancel := h.Times()
	switch {
	case cancel.IsZero():
		return fmt.Errorf("no cancel written")
	case writing.IsZero():
		return fmt.Errorf("the cancel was written, the call's POST never")
	case !cancel.After(writing):
		return fmt.Errorf("the cancel was written %v before the call's POST", writing.Sub(cancel))
	case grace > 0 && cancel.Sub(wrote) < grace:
		return fmt.Errorf("the cancel was written %v after the call's POST: want at least %v", cancel.Sub(wrote), grace)
	}
	return nil
}

// note sets *at to now.
func (h *HeldCalls) note(at *time.Time) {
	h.mu.Lock()
	*at = time.Now()
	h.mu.Unlock()
}

// heldCallConn is a connection of a HeldCalls dialer.
type heldCallConn struct {
	net.Conn
	h      *HeldCalls
	once   sync.Once
	closed chan struct{}
}

func (c *heldCallConn) Write(p []byte) (int, error) {
	switch {
	case bytes.Contains(p, []byte(`"tools/call"`)):
		t := time.NewTimer(c.h.Hold)
		defer t.Stop()
		select {
		case <-t.C:
		case <-c.closed:
			return 0, net.ErrClosed
		}
		c.h.note(&c.h.writing)
		n, err := c.Conn.Write(p)
		c.h.note(&c.h.wrote)
		return n, err
	case bytes.Contains(p, []byte(jsonrpc.MethodCancelled)):
		c.h.note(&c.h.cancel)
	}
	return c.Conn.Write(p)
}

func (c *heldCallConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Conn.Close()
}
