package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// DialLegacySSE connects to a server of the deprecated HTTP+SSE transport
// of protocol 2024-11-05: it GETs sseURL (usually .../sse), waits for the
// stream's first "endpoint" event, and resolves the URL it holds (often a
// relative path such as /message?sessionId=...) against sseURL. Send then
// POSTs each frame there (the server answers 202); every server message
// arrives as a "message" event of the GET stream and is delivered by Recv
// with Stream StreamSSE. When that stream ends, Recv returns an error
// wrapping ErrServerClosed once the frames before it are taken.
//
// ctx bounds the wait for the endpoint event. The endpoint must be on the
// same origin (scheme, host and port) as sseURL: a server cannot send the
// client's frames, and its headers, elsewhere. Options: WithHTTPClient,
// WithHeader, WithGrace, WithMaxFrame, WithoutAnswerHeaders,
// WithDialTimeout (a bound on that wait besides ctx).
func DialLegacySSE(ctx context.Context, sseURL string, opts ...Option) (*HTTPConn, error) {
	o, err := newOptions("DialLegacySSE", forLegacy, opts)
	if err != nil {
		return nil, err
	}
	ctx, cancel := o.dialContext(ctx)
	defer cancel()
	u, err := parseHTTPURL(sseURL)
	if err != nil {
		return nil, fmt.Errorf("transport: DialLegacySSE: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("transport: DialLegacySSE %s: %w", u.Redacted(), err)
	}
	c, err := newHTTPConn(o, u, true)
	if err != nil {
		return nil, fmt.Errorf("transport: DialLegacySSE: %w", err)
	}
	type result struct {
		u   *url.URL
		err error
	}
	found := make(chan result, 1)
	seen := false
	ri := reqInfo{
		onEvent: func(ev *SSEEvent) error {
			if ev.Type != "endpoint" || seen {
				return nil // later endpoint events are ignored
			}
			seen = true
			ep, err := resolveEndpoint(u, ev.Data)
			found <- result{ep, err}
			return nil
		},
		onEnd: func(err error) {
			if err == nil {
				err = errors.New("end of stream")
			}
			c.in.finish(fmt.Errorf("transport: legacy SSE stream %s ended (%v): %w", u.Redacted(), err, ErrServerClosed))
		},
	}
	// The stream's exchange lives on the connection's own context, which
	// no watch covers (it ends at Close): a dial given up before the
	// endpoint came closes the connection, or a server that never sends
	// the stream's headers would hold the dial for ever.
	stop := context.AfterFunc(ctx, func() {
		c.cancel(context.Cause(ctx))
		c.Close()
	})
	fail := func(err error) (*HTTPConn, error) {
		stop()
		c.Close()
		return nil, fmt.Errorf("transport: DialLegacySSE %s: %w", u.Redacted(), err)
	}
	ex, err := c.openStream(c.ctx, u, StreamSSE, SendOptions{}, ri)
	if err != nil {
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		return fail(err)
	}
	c.mu.Lock()
	c.getEx = ex
	c.mu.Unlock()
	var r result
	select {
	case r = <-found:
	case <-ex.Done():
		select {
		case r = <-found: // the endpoint came just before the end
		default:
			err := ex.Err()
			if err == nil {
				err = errors.New("stream ended")
			}
			return fail(fmt.Errorf("no endpoint event: %w", err))
		}
	case <-ctx.Done():
		return fail(fmt.Errorf("waiting for the endpoint event: %w", context.Cause(ctx)))
	}
	if r.err != nil {
		return fail(r.err)
	}
	if !stop() {
		return fail(fmt.Errorf("waiting for the endpoint event: %w", context.Cause(ctx)))
	}
	c.setPostURL(r.u)
	return c, nil
}

// resolveEndpoint resolves the data of an endpoint event against the SSE
// stream's URL and checks it stays on the same origin.
func resolveEndpoint(base *url.URL, data []byte) (*url.URL, error) {
	raw := string(bytes.TrimSpace(data))
	if raw == "" {
		return nil, errors.New("endpoint event holds no URL")
	}
	ref, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("endpoint event: %w", err)
	}
	ep := base.ResolveReference(ref)
	if ep.Scheme != base.Scheme || !strings.EqualFold(ep.Host, base.Host) {
		return nil, fmt.Errorf("endpoint %q is not on the origin of %s://%s", raw, base.Scheme, base.Host)
	}
	return ep, nil
}
