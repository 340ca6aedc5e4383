package transport

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/mcptape/mcptape/internal/httphead"
)

// WSSubprotocol is the WebSocket subprotocol of MCP, which DialWebSocket
// offers by default (as the TypeScript SDK's WebSocketClientTransport
// does).
const WSSubprotocol = "mcp"

// WithWSSubprotocols sets the subprotocols DialWebSocket offers, in order
// of preference, instead of [WSSubprotocol]; none at all (no
// Sec-WebSocket-Protocol header) when called without any, for servers
// that refuse an offer they do not know. Each must be an HTTP token (no
// spaces, commas or quotes). Whatever was offered, a server that selects
// none is accepted, and one that selects a subprotocol not offered is
// refused.
func WithWSSubprotocols(protos ...string) Option {
	return func(o *options) error {
		for _, p := range protos {
			if !httphead.IsToken(p) {
				return fmt.Errorf("websocket subprotocol %q is not a token", p)
			}
		}
		o.wsProtos, o.wsProtosSet = slices.Clone(protos), true
		o.use("WithWSSubprotocols", forWS)
		return nil
	}
}

// IsWebSocketURL reports whether raw is a ws:// or wss:// URL.
func IsWebSocketURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	s := strings.ToLower(u.Scheme)
	return s == "ws" || s == "wss"
}

// WSConn is a connection to an MCP server over WebSocket: every frame is
// one text message each way. See Conn for the concurrency rules.
type WSConn struct {
	c       *websocket.Conn
	url     string
	in      *inbox
	seq     atomic.Uint64
	closing atomic.Bool
	grace   time.Duration
	stopNow context.Context // WithStopNow: cuts the closing handshake
	once    sync.Once
	done    chan struct{} // closed when the reader has ended
}

// DialWebSocket opens a WebSocket connection to rawURL (ws:// or wss://),
// offering the subprotocol "mcp" (WithWSSubprotocols changes the offer).
// The server may select it or none. ctx bounds the handshake only.
// Options: WithHeader (a Host header sets the request's Host),
// WithHTTPClient (a net/http client, for TLS settings), WithMaxFrame (a
// longer frame from the server ends the connection: Recv returns the
// error), WithGrace, WithWSSubprotocols, WithDialTimeout (a bound on the
// handshake besides ctx).
// An upgrade the server refuses gives a *StatusError.
func DialWebSocket(ctx context.Context, rawURL string, opts ...Option) (*WSConn, error) {
	o, err := newOptions("DialWebSocket", forWS, opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := o.dialContext(ctx)
	defer cancel()
	if !IsWebSocketURL(rawURL) {
		return nil, fmt.Errorf("transport: DialWebSocket %q: not a ws:// or wss:// URL", rawURL)
	}
	protos := []string{WSSubprotocol}
	if o.wsProtosSet {
		protos = o.wsProtos
	}
	dopts := &websocket.DialOptions{Subprotocols: protos, HTTPClient: o.client}
	if len(o.header) > 0 {
		dopts.HTTPHeader = o.header.Clone()
		if h := o.header.Get("Host"); h != "" {
			dopts.Host = h
			dopts.HTTPHeader.Del("Host")
		}
	}
	c, resp, err := websocket.Dial(ctx, rawURL, dopts)
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			se := &StatusError{Method: http.MethodGet, URL: rawURL, Status: resp.StatusCode}
			if resp.StatusCode == http.StatusBadRequest && len(protos) > 0 {
				// Some servers refuse any subprotocol they do not know.
				return nil, fmt.Errorf("%w (subprotocols offered: %s)", se, strings.Join(protos, ", "))
			}
			return nil, se
		}
		return nil, fmt.Errorf("transport: DialWebSocket %s: %w", rawURL, err)
	}
	c.SetReadLimit(int64(o.maxFrame))
	w := &WSConn{c: c, url: rawURL, in: newInbox(streamQueueLimit), grace: o.grace, stopNow: o.stopNow, done: make(chan struct{})}
	go w.read()
	return w, nil
}

// Subprotocol returns the subprotocol the server selected ("mcp", or ""
// when it selected none).
func (w *WSConn) Subprotocol() string { return w.c.Subprotocol() }

// read delivers the server's text frames until the connection ends.
func (w *WSConn) read() {
	defer close(w.done)
	for {
		typ, data, err := w.c.Read(context.Background())
		if err != nil {
			w.in.finish(w.endError(err))
			return
		}
		if typ != websocket.MessageText {
			continue // not MCP; a recording proxy notes such frames
		}
		if data == nil {
			data = []byte{}
		}
		if w.in.putWait(context.Background(), Incoming{Frame: data, Stream: StreamWS, Time: time.Now()}) != nil {
			return
		}
	}
}

// endError describes the end of the connection.
func (w *WSConn) endError(err error) error {
	if w.closing.Load() {
		return ErrClosed
	}
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return fmt.Errorf("transport: websocket server %s closed the connection (status %d %q): %w", w.url, ce.Code, ce.Reason, ErrServerClosed)
	}
	return fmt.Errorf("transport: websocket %s: %v: %w", w.url, err, ErrServerClosed)
}

// Send writes frame as one text message. Of opt, Deadline and Written
// apply over WebSocket.
func (w *WSConn) Send(ctx context.Context, frame []byte, opt SendOptions) (*Exchange, error) {
	ctx, cancel := opt.bound(ctx)
	defer cancel()
	if w.closing.Load() {
		return nil, ErrClosed
	}
	if len(frame) == 0 {
		return nil, errors.New("transport: websocket frame is empty")
	}
	ex := &Exchange{ID: w.seq.Add(1), fin: true, Sent: time.Now()}
	if err := w.c.Write(ctx, websocket.MessageText, frame); err != nil {
		if w.closing.Load() {
			return nil, ErrClosed
		}
		return nil, fmt.Errorf("transport: websocket send to %s: %w", w.url, err)
	}
	ex.Responded = time.Now()
	if opt.Written != nil {
		opt.Written()
	}
	return ex, nil
}

// Recv returns the next text frame of the server. See Conn.
func (w *WSConn) Recv(ctx context.Context) (Incoming, error) {
	return w.in.get(ctx)
}

// Close sends a close frame (status 1000) and waits up to the grace period
// for the server's, then drops the connection. Recv returns ErrClosed at
// once. It is idempotent and returns nil.
func (w *WSConn) Close() error {
	w.once.Do(func() {
		w.closing.Store(true)
		w.in.shut()
		errc := make(chan error, 1)
		go func() { errc <- w.c.Close(websocket.StatusNormalClosure, "") }()
		t := time.NewTimer(w.grace)
		defer t.Stop()
		select {
		case <-errc: // a server that left first is no failure of ours
		case <-t.C:
			_ = w.c.CloseNow()
		case <-w.stopNow.Done():
			_ = w.c.CloseNow()
		}
		<-w.done
	})
	return nil
}
