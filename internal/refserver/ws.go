package refserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Subprotocol is the WebSocket subprotocol of MCP, offered by the
// TypeScript SDK's WebSocketClientTransport.
const Subprotocol = "mcp"

// WSHandler returns a handler serving s over WebSocket at [Path] (other
// paths get 404): one MCP session per WebSocket connection, one JSON-RPC
// message per text frame. It selects the subprotocol "mcp" when the client
// offers it and also accepts clients that offer none. A batch frame is
// split: its messages are handled one by one and answered in frames of
// their own. A frame that is not JSON gets a parse error (-32700) and the
// session goes on; a binary frame ends the session (status 1003). Frames
// are limited to [MaxFrameBytes]. Cross-origin upgrades (an Origin whose
// host is not the Host) get 403.
func WSHandler(s *mcp.Server, logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	mux.HandleFunc(Path, func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{Subprotocol}})
		if err != nil {
			logger.Debug("websocket upgrade refused", "remote", r.RemoteAddr, "err", err)
			return // Accept has answered
		}
		c.SetReadLimit(MaxFrameBytes)
		ctx := r.Context()
		conn := &wsConn{c: c}
		ss, err := s.Connect(ctx, wsTransport{conn}, nil)
		if err != nil {
			logger.Warn("websocket session", "err", err)
			_ = c.Close(websocket.StatusInternalError, "session failed")
			return
		}
		_ = ss.Wait()
		_ = ss.Close()
		conn.closeWith(conn.status())
	})
	return mux
}

// ServeWS serves s on ln with [WSHandler] until ctx is done, then closes
// every connection (status 1001, going away). It returns nil after such a
// stop and the error otherwise. ln is closed on return.
func ServeWS(ctx context.Context, ln net.Listener, s *mcp.Server, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	srv := &http.Server{
		Handler:           WSHandler(s, logger),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelError),
	}
	// Hijacked connections are not tracked by Shutdown: they end with
	// their request contexts, which derive from ctx.
	return serveUntil(ctx, srv, ln, "websocket", nil)
}

// wsTransport is the SDK transport of one accepted WebSocket connection.
type wsTransport struct{ c *wsConn }

// Connect implements mcp.Transport.
func (t wsTransport) Connect(context.Context) (mcp.Connection, error) { return t.c, nil }

// wsConn is an mcp.Connection over one WebSocket connection. Read is
// called by one goroutine; Write and Close by any.
type wsConn struct {
	c       *websocket.Conn
	pending []jsonrpc.Message // the rest of a batch frame, read by Read
	once    sync.Once
	mu      sync.Mutex
	code    websocket.StatusCode // close status to send (0: normal)
	reason  string
}

// Read implements mcp.Connection.
func (w *wsConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		if len(w.pending) > 0 {
			m := w.pending[0]
			w.pending = w.pending[1:]
			return m, nil
		}
		typ, data, err := w.c.Read(ctx)
		if err != nil {
			return nil, err
		}
		if typ != websocket.MessageText {
			w.setStatus(websocket.StatusUnsupportedData, "binary frames are not MCP")
			return nil, errors.New("refserver: websocket: binary frame")
		}
		msgs, err := decodeFrame(data)
		if err != nil {
			// Answer as JSON-RPC does, and go on: one bad frame need not
			// end the session as it must on stdio.
			perr := fmt.Sprintf(`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":%q}}`, "parse error: "+err.Error())
			if werr := w.c.Write(ctx, websocket.MessageText, []byte(perr)); werr != nil {
				return nil, werr
			}
			continue
		}
		w.pending = msgs
	}
}

// decodeFrame decodes one text frame: a message or a batch of them.
func decodeFrame(data []byte) ([]jsonrpc.Message, error) {
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '[' {
		m, err := jsonrpc.DecodeMessage(data)
		if err != nil {
			return nil, err
		}
		return []jsonrpc.Message{m}, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return nil, err
	}
	if len(raws) == 0 {
		return nil, errors.New("empty batch")
	}
	msgs := make([]jsonrpc.Message, 0, len(raws))
	for _, raw := range raws {
		m, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return nil, err
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// Write implements mcp.Connection: one message, one text frame.
func (w *wsConn) Write(ctx context.Context, m jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		return err
	}
	return w.c.Write(ctx, websocket.MessageText, data)
}

// setStatus chooses the close status sent when the session ends.
func (w *wsConn) setStatus(code websocket.StatusCode, reason string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.code, w.reason = code, reason
}

// status returns the close status chosen so far (normal closure by default).
func (w *wsConn) status() (websocket.StatusCode, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.code == 0 {
		return websocket.StatusNormalClosure, ""
	}
	return w.code, w.reason
}

// closeWith closes the connection once with the given status.
func (w *wsConn) closeWith(code websocket.StatusCode, reason string) {
	w.once.Do(func() {
		_ = w.c.Close(code, reason)
	})
}

// Close implements mcp.Connection; it is idempotent.
func (w *wsConn) Close() error {
	w.closeWith(w.status())
	return nil
}

// SessionID implements mcp.Connection: a WebSocket session has no id.
func (w *wsConn) SessionID() string { return "" }
