package mock

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"

	"github.com/coder/websocket"
)

// WSPath is the second path ServeWS serves, besides Path: the WebSocket
// endpoint of the LangGraph MCP server's documentation (ws://HOST/mcp/ws).
const WSPath = "/mcp/ws"

// ServeWS serves MCP over WebSocket at Path and WSPath on ln until ctx
// ends (nil) or the run must end (Mock.Err). Each connection is one
// client, served as ServeStdio serves one, a text frame standing for a
// line (binary frames are ignored). The subprotocol "mcp" is selected
// when the client offers it; a client offering none (or only others) is
// accepted without one. The connection closes with status 1000 when the
// client has nothing more to send and its answers are out.
func (m *Mock) ServeWS(ctx context.Context, ln net.Listener) error {
	serve := func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"mcp"}})
		if err != nil {
			return // Accept answered
		}
		c.SetReadLimit(maxBody)
		ctx := r.Context()
		_ = m.ServeStdio(ctx, &wsLines{c: c, ctx: ctx}, wsFrames{c: c, ctx: ctx})
		_ = c.Close(websocket.StatusNormalClosure, "")
	}
	mux := http.NewServeMux()
	mux.HandleFunc(Path, serve)
	mux.HandleFunc(WSPath, serve)
	return m.serve(ctx, ln, mux)
}

// wsLines reads a WebSocket's text frames as ServeStdio's lines: each
// frame on one line (a line break inside a JSON frame can only be white
// space, so it becomes a space), then "\n". Any end of the connection is
// the end of the input.
type wsLines struct {
	c   *websocket.Conn
	ctx context.Context
	buf []byte
}

func (l *wsLines) Read(p []byte) (int, error) {
	for len(l.buf) == 0 {
		typ, data, err := l.c.Read(l.ctx)
		if err != nil {
			return 0, io.EOF
		}
		if typ != websocket.MessageText {
			continue
		}
		data = bytes.ReplaceAll(bytes.ReplaceAll(data, []byte{'\r'}, []byte{' '}), []byte{'\n'}, []byte{' '})
		l.buf = append(data, '\n')
	}
	n := copy(p, l.buf)
	l.buf = l.buf[n:]
	return n, nil
}

// wsFrames sends each line ServeStdio writes (one Write per frame) as a
// text frame, without its "\n".
type wsFrames struct {
	c   *websocket.Conn
	ctx context.Context
}

func (f wsFrames) Write(p []byte) (int, error) {
	if err := f.c.Write(f.ctx, websocket.MessageText, bytes.TrimSuffix(p, []byte{'\n'})); err != nil {
		return 0, err
	}
	return len(p), nil
}
