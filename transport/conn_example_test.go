package transport_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"

	"github.com/mcptape/mcptape/transport"
)

// A Streamable HTTP session, frame by frame: the connection keeps the
// session id and protocol version of the initialize answer and delivers
// every server frame with its transport metadata.
func ExampleDialHTTP() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Header.Get("Mcp-Session-Id") == "" {
			w.Header().Set("Mcp-Session-Id", "s-1")
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18"}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "id: e1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"seen\":%d}}\n\n", len(body))
	}))
	defer srv.Close()

	ctx := context.Background()
	c, err := transport.DialHTTP(ctx, srv.URL+"/mcp")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	c.Send(ctx, []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`), transport.SendOptions{})
	in, _ := c.Recv(ctx)
	fmt.Printf("%s %s session=%s version=%s\n", in.Stream, in.Frame, c.SessionID(), c.ProtocolVersion())

	ex, _ := c.Send(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), transport.SendOptions{})
	in, _ = c.Recv(ctx)
	fmt.Printf("%s %s event=%s exchange=%d type=%s\n", in.Stream, in.Frame, in.EventID, in.Exchange, ex.ContentType)
	// Output:
	// post {"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18"}} session=s-1 version=2025-06-18
	// post {"jsonrpc":"2.0","id":1,"result":{"seen":46}} event=e1 exchange=2 type=text/event-stream
}
