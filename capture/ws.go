package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptape/mcptape/tape"
	"github.com/mcptape/mcptape/transport"
)

// The WebSocket recorder (MCP over WebSocket: one JSON-RPC message per text
// frame; the client may offer subprotocol "mcp" or none).
//
// Handshake. A client's upgrade request becomes the upstream's upgrade
// request, end to end: the client's headers (hop-by-hop ones aside), its
// Sec-WebSocket-Key, version and subprotocol offers, its Origin unchanged
// and its Host handled as the HTTP proxy does (a Host that names the proxy
// becomes the upstream's, unless WithPreserveHost). Only when the upstream
// has switched protocols, answering that key, is the client's connection
// taken over and answered with the upstream's 101 and headers as they are
// (its Sec-WebSocket-Accept and chosen subprotocol included); a refused
// upgrade is answered to the client with the upstream's status, headers
// and body (up to 1 MiB; the tape keeps its first 4 KiB).
//
// Compression. The client's Sec-WebSocket-Extensions offers (the
// permessage-deflate of browsers and Node) are not passed on, so no
// extension is negotiated, and a 101 that names one is refused (502). The
// tape must hold each message's text; decoding deflate for it would need a
// flate context per direction (context takeover) and a decompression per
// message on the hot path, for MCP messages that cross a loopback or a
// LAN. Without extensions every frame is plain RFC 6455, and a frame with
// a reserved bit set is a protocol error.
//
// Relay. After the handshake the proxy does not re-frame anything: two
// pumps, one per direction, read what the socket holds (up to 64 KiB),
// write the same bytes to the other side in one write, then record what
// those bytes completed, parsed by the proxy's own frame reader
// (ws_frame.go): masks, fragments, pings and pongs pass unchanged, and the
// peers answer each other's pings and close frames. A text message (its
// fragments reassembled, a client's payload unmasked into a copy) is one
// message record: a batch stays one record, as on stdio, and a message
// that is not JSON-RPC is forwarded, recorded and followed by an "error"
// event. Binary messages, pings, pongs and close frames (code and reason)
// are "ws" events. The only frames of the proxy's own are close frames,
// written between two forwarded frames: status 1014 to the client when the
// upstream dropped without a close frame, 1001 to the upstream when the
// client did (both recorded as such), 1009 to both for a message larger
// than WithMaxBody, 1002 for a frame that breaks RFC 6455 (recorded as an
// "error" event saying what and where: the side, frame number and byte
// offset), 1001 at shutdown. Once a session's end has begun, both
// connections are closed after wsCloseGrace at the latest.
//
// Records. Each WebSocket connection is one session, "ws-N", with an
// "open" event, an "http" event with Phase "response" for the upgrade
// (status 101, redacted headers), the messages and "ws" events, an "http"
// event with Phase "end" and a "close" event. A refused upgrade leaves
// only an "http" event with Phase "end" (no session).

// WSProxy is a recording proxy for MCP over WebSocket. It is an
// http.Handler: serve it with Serve, or mount it on a server of your own.
type WSProxy struct {
	up    *url.URL
	rec   RecordWriter
	o     httpOptions
	names *HTTPProxy // hostNamesProxy, with the same options
	max   int

	mu       sync.Mutex
	live     map[*wsSession]struct{}
	closed   bool
	wg       sync.WaitGroup
	nextConn atomic.Uint64
	nextX    atomic.Uint64
	warned   atomic.Bool
	st       struct{ sessions, refused, c2s, s2c, invalid atomic.Int64 }
}

// WSStats counts what a WSProxy did.
type WSStats struct {
	Sessions       int64 // upgrades accepted
	Refused        int64 // upgrades the upstream refused (or could not be reached for)
	ClientMessages int64 // text frames recorded client to server
	ServerMessages int64 // text frames recorded server to client
	Invalid        int64 // text frames flagged as not valid JSON-RPC
}

// NewWSProxy returns a recording proxy to upstream, a ws:// or wss:// URL,
// recording into rec. It takes the HTTP proxy's options that apply:
// WithPreserveHost, WithInsecureTLS, WithRedactHeaders, WithoutRedaction,
// WithListenAddr, WithHTTPClock, WithLogf, WithMaxBody (the largest frame,
// default transport.DefaultMaxFrame: a larger one ends the connection with
// status 1009).
func NewWSProxy(upstream string, rec RecordWriter, opts ...HTTPOption) (*WSProxy, error) {
	up, err := url.Parse(upstream)
	switch {
	case err != nil:
		return nil, fmt.Errorf("capture: upstream %q: %w", RedactURL(upstream), err)
	case up.Scheme != "ws" && up.Scheme != "wss":
		return nil, fmt.Errorf("capture: upstream %q: want a ws:// or wss:// URL", RedactURL(upstream))
	case up.Host == "":
		return nil, fmt.Errorf("capture: upstream %q: no host", RedactURL(upstream))
	case rec == nil:
		return nil, errors.New("capture: nil RecordWriter")
	}
	o := httpOptions{maxBody: transport.DefaultMaxFrame, now: time.Now, grace: DefaultShutdownGrace}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, fmt.Errorf("capture: websocket option: %w", err)
		}
	}
	if o.transport != nil {
		return nil, errors.New("capture: websocket option: WithTransport does not apply")
	}
	if o.warnf == nil {
		o.warnf = func(string, ...any) {}
	}
	if o.debugf == nil {
		o.debugf = func(string, ...any) {}
	}
	o.redact.known, o.redact.count = new(sync.Map), new(atomic.Int64)
	return &WSProxy{up: up, rec: rec, o: o, names: &HTTPProxy{o: o}, max: o.maxBody,
		live: make(map[*wsSession]struct{})}, nil
}

// Upstream returns the upstream URL.
func (p *WSProxy) Upstream() *url.URL { u := *p.up; return &u }

// Stats returns the counts so far.
func (p *WSProxy) Stats() WSStats {
	return WSStats{Sessions: p.st.sessions.Load(), Refused: p.st.refused.Load(), ClientMessages: p.st.c2s.Load(),
		ServerMessages: p.st.s2c.Load(), Invalid: p.st.invalid.Load()}
}

// Serve accepts clients on ln until ctx ends, then closes every session
// (status 1001, going away, to both sides; recorded as closed by the
// proxy) and returns nil. ln is closed on return.
func (p *WSProxy) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) }}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		p.Close()
		return fmt.Errorf("capture: websocket proxy: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := p.o.shutdownContext(ctx)
	defer cancel()
	_ = srv.Shutdown(sctx) // hijacked connections are ours: Close ends them
	p.Close()
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("capture: websocket proxy: %w", err)
	}
	return nil
}

// Close ends every session as Serve does at shutdown and waits for their
// recording to end. Later upgrades get 503.
func (p *WSProxy) Close() {
	p.mu.Lock()
	p.closed = true
	live := make([]*wsSession, 0, len(p.live))
	for s := range p.live {
		live = append(live, s)
	}
	p.mu.Unlock()
	for _, s := range live {
		s.end(ClosedByProxy, "shutdown", wsCloseGoingAway, "mcptape proxy shutting down")
	}
	p.wg.Wait()
}

// write hands one record to the tape; a failure is reported once.
func (p *WSProxy) write(r *tape.Record) {
	if err := p.rec.Write(r); err != nil && !p.warned.Swap(true) {
		p.o.warnf("recording failed, the tape misses records from now on: %v", err)
	}
}

// wsHandshakeHeaders are the request headers the proxy does not pass on:
// hop-by-hop ones and those of the WebSocket handshake, which the upstream
// handshake makes anew.
var wsHandshakeHeaders = [...]string{"Connection", "Upgrade", "Keep-Alive", "Proxy-Connection", "Proxy-Authorization", "Proxy-Authenticate",
	"Te", "Trailer", "Transfer-Encoding", "Content-Length", "Host",
	"Sec-Websocket-Key", "Sec-Websocket-Version", "Sec-Websocket-Extensions", "Sec-Websocket-Protocol", "Sec-Websocket-Accept"}

// stripHandshake returns a copy of h without wsHandshakeHeaders.
func stripHandshake(h http.Header) http.Header {
	out := h.Clone()
	if out == nil {
		out = http.Header{}
	}
	for _, k := range wsHandshakeHeaders {
		delete(out, k)
	}
	return out
}

// headerTokens lists the comma-separated tokens of header name in h.
func headerTokens(h http.Header, name string) []string {
	var out []string
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				out = append(out, t)
			}
		}
	}
	return out
}

// headerHasToken reports whether header name in h holds token (in any
// case).
func headerHasToken(h http.Header, name, token string) bool {
	return slices.ContainsFunc(headerTokens(h, name), func(t string) bool { return strings.EqualFold(t, token) })
}

// upstreamHost is the Host the upstream request carries.
func (p *WSProxy) upstreamHost(r *http.Request) string {
	local, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !p.o.preserveHost && p.names.hostNamesProxy(r.Host, localAddrOf(local), r.TLS != nil) {
		return p.up.Host
	}
	return r.Host
}

// httpEvent writes an "http" event.
func (p *WSProxy) httpEvent(t time.Time, session string, x uint64, e *HTTPEvent) {
	p.write(&tape.Record{Type: tape.TypeEvent, Time: t.UnixNano(), Session: session, Event: tape.EventHTTP, Exchange: x, Data: marshalData(e)})
}

// refuse answers a client whose upgrade the upstream refused with what the
// upstream said, and records it.
func (p *WSProxy) refuse(w http.ResponseWriter, r *http.Request, x uint64, conn uint64, start time.Time, resp *http.Response, err error) {
	p.st.refused.Add(1)
	ev := &HTTPEvent{Phase: "end", Method: r.Method, Path: p.o.redact.requestURI(r.URL), Host: r.Host, Conn: conn,
		RequestHeaders: p.o.redact.headers(r.Header), ClosedBy: ClosedByServer, DurationNs: int64(p.o.now().Sub(start))}
	if resp == nil || resp.StatusCode == http.StatusSwitchingProtocols {
		ev.Status, ev.ClosedBy, ev.Error = http.StatusBadGateway, ClosedByProxy, err.Error()
		p.httpEvent(p.o.now(), "", x, ev)
		http.Error(w, "mcptape: websocket upstream: "+err.Error(), http.StatusBadGateway)
		return
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, wsMaxRefusal))
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(body)
	ev.Status, ev.ContentType, ev.ResponseHeaders = resp.StatusCode, resp.Header.Get("Content-Type"), p.o.redact.headers(resp.Header)
	ev.Body = string(body[:min(len(body), maxNoteBody)])
	p.httpEvent(p.o.now(), "", x, ev)
}
