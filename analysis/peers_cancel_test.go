package analysis

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcptape/mcptape/internal/peertest"
)

// cancelToken is the progress token of the call that cancelAfterProgress
// cancels.
const cancelToken = "cancel-me"

// canceller lets a Go SDK client cancel a call after its first progress
// notification, whatever the scheduling, so that the tape holds the
// cancel (TestRealPeers/gosdk-everything once recorded none:
// cancellations Count 0). Its transport holds back the answer to the call
// until the call has returned (peertest.AnswerHold); over HTTP, holdFront
// holds it back before the recording proxy.
type canceller struct {
	progress chan string // tokens of the client's progress notifications
	hold     *peertest.AnswerHold
}

func newCanceller() *canceller {
	return &canceller{progress: make(chan string, 100), hold: peertest.NewAnswerHold(`"` + cancelToken + `"`)}
}

// progressHandler is the client's ProgressNotificationHandler.
func (c *canceller) progressHandler(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	select {
	case c.progress <- fmt.Sprint(req.Params.ProgressToken):
	default:
	}
}

// transport wraps the client's transport.
func (c *canceller) transport(t mcp.Transport) mcp.Transport { return c.hold.Transport(t) }

// cancelAfterProgress calls a tool with cancelToken and cancels the call
// when the first progress notification for that token arrives (the SDK
// may hand over a notification of an earlier call after that call
// returned: a cancel on it would stop this call before it was sent); it
// returns once the cancel is written.
func (c *canceller) cancelAfterProgress(t *testing.T, ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) {
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		p := &mcp.CallToolParams{Name: name, Arguments: args}
		p.SetProgressToken(cancelToken)
		_, err := cs.CallTool(cctx, p)
		done <- err
	}()
	timeout := time.After(20 * time.Second)
	for waiting := true; waiting; {
		select {
		case tok := <-c.progress:
			waiting = tok != cancelToken
		case <-timeout:
			t.Fatal("no progress before the cancel")
		}
	}
	cancel()
	if err := <-done; err == nil {
		t.Error("the cancelled call returned no error")
	}
	c.hold.Release()
	select {
	case <-c.hold.CancelSent():
	case <-time.After(20 * time.Second):
		t.Fatal("the client did not send the cancel")
	}
}

// holdFront serves a reverse proxy to upstream, a Streamable HTTP
// server, that holds back the answer to the call with cancelToken (from
// the line of the SSE stream that carries it) until the client has sent
// its cancel: over HTTP the recording proxy sits between the client and
// the server, and sees the answer whatever the client does.
func (c *canceller) holdFront(t *testing.T, upstream string) string {
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host}) // paths as they come
	rp.FlushInterval = -1
	rp.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Context().Value(holdKey{}) != nil {
			resp.Body = &holdBody{ReadCloser: resp.Body, ctx: resp.Request.Context(), release: c.hold.CancelSent()}
		}
		return nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
			if bytes.Contains(body, []byte(`"`+cancelToken+`"`)) {
				r = r.WithContext(context.WithValue(r.Context(), holdKey{}, true))
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + u.Path
}

// holdKey marks the request whose answer holdFront holds back.
type holdKey struct{}

// holdBody passes on a response body up to the line with the first
// "result", then waits for release (or the request's end) before the rest.
type holdBody struct {
	io.ReadCloser
	ctx     context.Context
	release <-chan struct{}
	cut     bool   // the line with the result is found
	rest    []byte // from that line, not passed on yet
	err     error  // the read error that came with rest
}

func (h *holdBody) Read(p []byte) (int, error) {
	if h.cut {
		if h.release != nil {
			select {
			case <-h.release:
			case <-h.ctx.Done():
			}
			h.release = nil
		}
		if len(h.rest) > 0 {
			n := copy(p, h.rest)
			h.rest = h.rest[n:]
			return n, nil
		}
		if h.err != nil {
			return 0, h.err
		}
		return h.ReadCloser.Read(p)
	}
	n, err := h.ReadCloser.Read(p)
	i := bytes.Index(p[:n], []byte(`"result"`))
	if i < 0 {
		return n, err
	}
	start := bytes.LastIndexByte(p[:i], '\n') + 1
	h.cut, h.rest, h.err = true, append([]byte(nil), p[start:n]...), err
	if start == 0 {
		return h.Read(p)
	}
	return start, nil
}
