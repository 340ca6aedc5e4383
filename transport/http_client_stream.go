package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
)

// streamReadSize is the size of the buffers event streams are read with.
// Small, because a load test may hold thousands of GET streams open; the
// SSE framer keeps longer events by itself.
const streamReadSize = 4 << 10

// readBuffers recycles the read buffers of event streams.
var readBuffers = sync.Pool{New: func() any {
	b := make([]byte, streamReadSize)
	return &b
}}

// errCutEvent is the error of a stream that ended inside an event.
var errCutEvent = errors.New("event stream ended inside an event")

// readStream delivers the events of an event-stream answer as frames until
// the stream ends, then completes the exchange.
func (c *HTTPConn) readStream(ex *Exchange, body io.ReadCloser, ri reqInfo) {
	defer c.wg.Done()
	rctx := ex.context()
	var lastID string
	frames := 0
	cut := false
	framer, err := NewSSEFramer(func(ev *SSEEvent) error {
		if ev.HasID {
			lastID = ev.ID
		}
		if ev.Incomplete {
			cut = ev.HasData // dropped, as browsers do
			return nil
		}
		if ev.Type != "" && ev.Type != "message" {
			if ri.onEvent != nil {
				return ri.onEvent(ev)
			}
			return nil
		}
		if !ev.IsMessage() {
			return nil // priming event, keep-alive, retry setting
		}
		data, truncated := ev.Data, ev.Truncated
		if len(data) > c.max {
			data, truncated = data[:c.max], true
		}
		frame := bytes.Clone(data)
		if ri.keep != nil && !ri.keep(frame) {
			return nil
		}
		if ri.initKey != "" && isAnswerTo(frame, ri.initKey) {
			c.noteVersion(frame)
		}
		frames++
		return c.in.putWait(rctx, Incoming{
			Frame: frame, Exchange: ex.ID, Stream: ri.stream,
			EventID: lastID, Time: time.Now(), Truncated: truncated,
		})
	}, WithMaxEvent(eventLimit(c.max)), WithoutRaw())
	if err == nil {
		err = pump(body, framer)
	}
	body.Close()
	if err != nil && ex.ctxErr() != nil {
		err = ex.cause()
	} else if err == nil && cut {
		err = fmt.Errorf("transport: %s %s: %w", ri.method, ri.url, errCutEvent)
	} else if err != nil && !errors.Is(err, ErrClosed) {
		err = fmt.Errorf("transport: %s %s: reading the event stream: %w", ri.method, ri.url, err)
	}
	c.endExchange(ex)
	ex.frames = frames
	ex.finish(err)
	if ri.onEnd != nil {
		ri.onEnd(err)
	}
}

// eventLimit returns the SSE framer bound that lets an event's data reach
// maxFrame bytes: the framer bounds lines, and a data line starts with
// "data: ".
func eventLimit(maxFrame int) int {
	const fieldName = 16
	if maxFrame > math.MaxInt-fieldName {
		return maxFrame
	}
	return maxFrame + fieldName
}

// pump reads body into framer until the body ends (nil) or fails.
func pump(body io.Reader, framer *SSEFramer) error {
	bp := readBuffers.Get().(*[]byte)
	defer readBuffers.Put(bp)
	buf := *bp
	for {
		n, err := body.Read(buf)
		if n > 0 {
			if _, werr := framer.Write(buf[:n]); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return framer.Close()
		}
		if err != nil {
			return err
		}
	}
}

// isAnswerTo reports whether frame is a response whose id has key.
func isAnswerTo(frame []byte, key string) bool {
	info := jsonrpc.Classify(frame)
	return (info.Kind == jsonrpc.KindResponse || info.Kind == jsonrpc.KindError) && info.ID.Key() == key
}

// OpenGetStream opens the session's GET stream of server-initiated
// messages (Streamable HTTP only). It returns once the answer's headers
// arrived; the stream's frames then come through Recv with Stream
// StreamGET, until the stream ends, ctx ends, or the connection closes.
// A server without such a stream answers 405: the error is then a
// *StatusError. opt.Header may carry Last-Event-ID to resume a stream.
// Only one GET stream may be open at a time.
func (c *HTTPConn) OpenGetStream(ctx context.Context, opt SendOptions) (*Exchange, error) {
	if c.legacy {
		return nil, errors.New("transport: OpenGetStream: a legacy SSE connection has its stream from the start")
	}
	c.mu.Lock()
	switch {
	case c.closed:
		c.mu.Unlock()
		return nil, ErrClosed
	case c.getting || (c.getEx != nil && !c.getEx.complete()):
		c.mu.Unlock()
		return nil, errors.New("transport: OpenGetStream: a GET stream is already open")
	}
	c.getting = true
	c.mu.Unlock()
	ex, err := c.openStream(ctx, c.base, StreamGET, opt, reqInfo{})
	c.mu.Lock()
	c.getting = false
	if ex != nil && err == nil {
		c.getEx = ex
	}
	c.mu.Unlock()
	return ex, err
}

// openGetInBackground opens the GET stream without waiting (WithGetStream).
func (c *HTTPConn) openGetInBackground() {
	if !c.startStream() {
		return
	}
	go func() {
		defer c.wg.Done()
		c.OpenGetStream(c.ctx, SendOptions{})
	}()
}

// openStream sends a GET for an event stream at u and starts reading it.
func (c *HTTPConn) openStream(ctx context.Context, u *url.URL, stream Stream, opt SendOptions, ri reqInfo) (*Exchange, error) {
	ri.method, ri.url, ri.stream, ri.needsBody = http.MethodGet, u.Redacted(), stream, true
	h := make(http.Header, 6)
	h["Accept"] = []string{"text/event-stream"}
	for k, v := range c.header {
		h[k] = v
	}
	if !c.legacy {
		c.mu.Lock()
		if c.sessionH != nil {
			h[HeaderSessionID] = c.sessionH
		}
		if v := c.versionLocked(); v != "" {
			h[HeaderProtocolVersion] = []string{v}
		}
		c.mu.Unlock()
	}
	for k, v := range opt.Header {
		h[http.CanonicalHeaderKey(k)] = v
	}
	if v := h[HeaderSessionID]; len(v) > 0 {
		ri.session = v[0]
	}
	ex := &Exchange{ID: c.seq.Add(1), Method: http.MethodGet, Sent: time.Now()}
	c.startExchange(ctx, ex, opt.Deadline)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		c.endExchange(ex)
		return nil, fmt.Errorf("transport: GET %s: %w", ri.url, err)
	}
	setHeader(req, h)
	resp, _, err := c.do(req, ex, nil)
	if err != nil {
		c.endExchange(ex)
		return nil, c.requestError(ex, err)
	}
	if resp.StatusCode/100 == 2 && mediaType(resp.Header.Get("Content-Type")) != "text/event-stream" {
		ex, _ = c.handle(ex, resp, &ri)
		return ex, fmt.Errorf("transport: GET %s: %d with content type %q, not an event stream", ri.url, ex.Status, ex.ContentType)
	}
	return c.handle(ex, resp, &ri)
}

// Close ends the connection: Recv returns ErrClosed, every exchange and
// stream ends, and, for a Streamable HTTP session, DELETE is sent (unless
// WithoutDelete), waiting at most the grace period for its answer. The
// error is that of the DELETE (a 404 or 405 answer is not an error).
func (c *HTTPConn) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		session := c.session
		live := c.live
		c.live = nil
		unwatch := c.watch.stop
		c.watch.gen++
		c.watch.done, c.watch.stop, c.watch.covered = nil, nil, 0
		c.mu.Unlock()
		if unwatch != nil {
			unwatch()
		}
		c.in.shut()
		c.cancel(ErrClosed)
		for ex := range live {
			ex.abort(ErrClosed)
		}
		if session != "" && !c.noDelete && !c.legacy {
			c.closeErr = c.deleteSession(session)
		}
		c.wg.Wait()
		if c.ownClient {
			c.client.CloseIdleConnections()
		}
	})
	return c.closeErr
}

// deleteSession asks the server to end the session; told to stop now
// (WithStopNow), it does not, or stops waiting, and says nothing.
func (c *HTTPConn) deleteSession(session string) error {
	if c.stopNow.Err() != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(c.stopNow, c.grace)
	defer cancel()
	u := c.base.Redacted()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.base.String(), nil)
	if err != nil {
		return fmt.Errorf("transport: DELETE %s: %w", u, err)
	}
	h := make(http.Header, len(c.header)+2)
	for k, v := range c.header {
		h[k] = v
	}
	h[HeaderSessionID] = []string{session}
	if v := c.ProtocolVersion(); v != "" {
		h[HeaderProtocolVersion] = []string{v}
	}
	setHeader(req, h)
	resp, _, err := c.do(req, nil, nil)
	if err != nil {
		if c.stopNow.Err() != nil {
			return nil
		}
		return fmt.Errorf("transport: %w", err)
	}
	body, _ := readCapped(resp.Body, MaxErrorBody)
	resp.Body.Close()
	switch {
	case resp.StatusCode/100 == 2, resp.StatusCode == http.StatusNotFound, resp.StatusCode == http.StatusMethodNotAllowed:
		return nil
	}
	return &StatusError{Method: http.MethodDelete, URL: u, Status: resp.StatusCode, Body: body}
}
