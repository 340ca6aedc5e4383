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

// WSPath is the second path [WSHandler] serves, besides [Path]: the
// WebSocket endpoint of the LangGraph MCP server's documentation
// (ws://HOST/mcp/ws).
const WSPath = "/mcp/ws"

// WSConfig chooses how [WSHandlerWith] and [ServeWS] serve MCP over
// WebSocket.
type WSConfig struct {
	// Logger receives the handler's logs; nil discards them.
	Logger *slog.Logger
	// Chat streams the chat tool's calls: a text frame holding one such
	// call is answered with the chunks (see [Chat]), each a text frame of
	// its own under the call's id, written as they come, so that the
	// answers to concurrent calls interleave. The zero value leaves them
	// to the SDK (one plain result).
	Chat Chat
}

// WSHandler returns a handler serving s over WebSocket at [Path] and
// [WSPath] (other paths get 404): one MCP session per WebSocket
// connection, one JSON-RPC message per text frame. It selects the
// subprotocol "mcp" when the client offers it, and accepts clients that
// offer none (or only others) without selecting one. A batch frame is
// split: its messages are handled one by one and answered in frames of
// their own. A frame that is not JSON gets a parse error (-32700) and the
// session goes on; a binary frame ends the session (status 1003). Frames
// are limited to [MaxFrameBytes]. Cross-origin upgrades (an Origin whose
// host is not the Host) get 403. The handler's logs go to logger (nil
// discards them).
func WSHandler(s *mcp.Server, logger *slog.Logger) http.Handler {
	return WSHandlerWith(s, WSConfig{Logger: logger})
}

// WSHandlerWith is [WSHandler] configured by cfg: with cfg.Chat, the chat
// tool's calls are streamed. A chat call inside a batch frame is left to
// the SDK, as on stdio. A stream still running when its session ends
// (the client left, the server stops) ends without its end result.
func WSHandlerWith(s *mcp.Server, cfg WSConfig) http.Handler {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	serve := func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{Subprotocol}})
		if err != nil {
			logger.Debug("websocket upgrade refused", "remote", r.RemoteAddr, "err", err)
			return // Accept has answered
		}
		c.SetReadLimit(MaxFrameBytes)
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		conn := &wsConn{c: c, ctx: ctx, chat: cfg.Chat}
		ss, err := s.Connect(ctx, wsTransport{conn}, nil)
		if err != nil {
			logger.Warn("websocket session", "err", err)
			_ = c.Close(websocket.StatusInternalError, "session failed")
			return
		}
		// The SDK reads with a context that never ends: a server stopping
		// (r's context, from ServeWS's) closes the connection itself.
		stop := context.AfterFunc(r.Context(), func() { conn.closeWith(websocket.StatusGoingAway, "server shutting down") })
		_ = ss.Wait()
		stop()
		_ = ss.Close()
		conn.endStreams(cancel)
		conn.closeWith(conn.status())
	}
	mux := http.NewServeMux()
	mux.HandleFunc(Path, serve)
	mux.HandleFunc(WSPath, serve)
	return mux
}

// ServeWS serves s on ln with [WSHandlerWith] until ctx is done, then
// closes every connection (status 1001, going away). It returns nil after
// such a stop and the error otherwise. ln is closed on return.
func ServeWS(ctx context.Context, ln net.Listener, s *mcp.Server, cfg WSConfig) error {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	srv := &http.Server{
		Handler:           WSHandlerWith(s, cfg),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		ErrorLog:          slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelError),
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
// called by one goroutine; Write and Close by any (the library's Write may
// be called concurrently: each message goes out whole).
type wsConn struct {
	c       *websocket.Conn
	ctx     context.Context   // the connection's; ends with the session
	chat    Chat              // streamed by Read itself when enabled
	streams sync.WaitGroup    // chat answers being written
	runs    chatRuns          // the chat answers being written, to cancel
	pending []jsonrpc.Message // the rest of a batch frame, read by Read
	once    sync.Once
	mu      sync.Mutex           // guards code, reason and starting streams
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
		if w.streamChat(data) {
			continue
		}
		if w.chat.enabled() {
			w.runs.cancelFrom("", data)
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

// streamChat answers frame itself, in a goroutine, when chat streaming is
// on and frame is one chat call: each chunk is a text frame of its own.
// The stream stops, without its end result, when the connection's context
// ends (before its next chunk), the client cancels the call
// (notifications/cancelled) or a write fails.
func (w *wsConn) streamChat(frame []byte) bool {
	if !w.chat.enabled() {
		return false
	}
	id, query, ok := parseChatCall(frame)
	if !ok {
		return false
	}
	// Under mu, so that no stream starts after the handler, having
	// cancelled ctx, has begun waiting for them.
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ctx.Err() != nil {
		return true // the session is ending: the call goes unanswered
	}
	w.streams.Add(1)
	ctx, end := w.runs.start(w.ctx, "", id) // before the next frame: its cancel
	go func() {
		defer w.streams.Done()
		defer end()
		// The write itself is not bound to ctx: the library drops the
		// connection, close frame unsent, when a write's context ends.
		// Closing the connection ends a blocked write.
		wctx := context.WithoutCancel(w.ctx)
		_ = w.chat.stream(ctx, id, query, func(f []byte, _ bool) error {
			return w.c.Write(wctx, websocket.MessageText, f)
		})
	}()
	return true
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

// endStreams cancels the connection's context, which cuts the chat
// streams still running, and waits for them.
func (w *wsConn) endStreams(cancel context.CancelFunc) {
	w.mu.Lock()
	cancel() // under mu: a streamChat has added its stream, or will see ctx ended
	w.mu.Unlock()
	w.streams.Wait()
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
