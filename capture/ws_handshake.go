package capture

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1" //nolint:gosec // RFC 6455 §4.2.2 names SHA-1 for Sec-WebSocket-Accept
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/mcptape/mcptape/internal/rawio"
	"github.com/mcptape/mcptape/tape"
)

// wsUpgradeTimeout bounds the upstream's handshake.
const wsUpgradeTimeout = 30 * time.Second

// wsMaxRefusal is the most of a refused upgrade's body passed on to the
// client.
const wsMaxRefusal = 1 << 20

// wsAcceptGUID is the GUID of RFC 6455 §1.3.
const wsAcceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// wsAccept is the Sec-WebSocket-Accept that answers key.
func wsAccept(key string) string {
	h := sha1.Sum([]byte(key + wsAcceptGUID)) //nolint:gosec // see the import
	return base64.StdEncoding.EncodeToString(h[:])
}

// wsUpstream is the connection to the upstream of a session, after its
// 101: pre holds what the upstream sent right after the response head.
type wsUpstream struct {
	conn net.Conn
	pre  []byte
}

// dialUpstream sends req, an upgrade request, on a connection of its own
// to the upstream and reads the answer. On a 101 that answers the
// client's handshake (headers h) it returns the connection; on another
// status, the response to pass on to the client, its body to read before
// the connection is closed; and an error when the upstream cannot be
// reached or its 101 must not reach the client. The TCP connection reads
// and writes with raw system calls (package rawio), as the relay does most
// of its work there. The upstream is dialled directly: HTTP_PROXY and the
// like are not used.
func (p *WSProxy) dialUpstream(ctx context.Context, req *http.Request, h http.Header) (*wsUpstream, *http.Response, error) {
	host := req.URL.Host
	if req.URL.Port() == "" {
		host = net.JoinHostPort(req.URL.Hostname(), map[string]string{"http": "80", "https": "443"}[req.URL.Scheme])
	}
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return nil, nil, err
	}
	conn := rawio.Wrap(c)
	if req.URL.Scheme == "https" {
		tc := tls.Client(conn, &tls.Config{ServerName: req.URL.Hostname(), NextProtos: []string{"http/1.1"},
			InsecureSkipVerify: p.o.insecure}) //nolint:gosec // asked for with --insecure
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, nil, fmt.Errorf("TLS handshake: %w", err)
		}
		conn = tc
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	br := bufio.NewReader(conn)
	err = req.Write(conn)
	var resp *http.Response
	if err == nil {
		resp, err = http.ReadResponse(br, req)
	}
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		resp.Body = &closingBody{ReadCloser: resp.Body, conn: conn}
		return nil, resp, nil
	}
	if err := checkUpgrade(resp.Header, h); err != nil {
		conn.Close()
		return nil, resp, err
	}
	if !stop() {
		conn.Close()
		return nil, resp, ctx.Err()
	}
	_ = conn.SetDeadline(time.Time{})
	up := &wsUpstream{conn: conn}
	if n := br.Buffered(); n > 0 {
		b, _ := br.Peek(n)
		up.pre = bytes.Clone(b)
	}
	return up, resp, nil
}

// closingBody is the body of a refused upgrade: closing it closes the
// connection it came on.
type closingBody struct {
	io.ReadCloser
	conn net.Conn
}

func (b *closingBody) Close() error {
	err := b.ReadCloser.Close()
	b.conn.Close()
	return err
}

// ServeHTTP proxies and records one WebSocket connection.
func (p *WSProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := p.o.now()
	if !headerHasToken(r.Header, "Connection", "upgrade") || !headerHasToken(r.Header, "Upgrade", "websocket") {
		w.Header().Set("Upgrade", "websocket")
		http.Error(w, "mcptape: this proxy records MCP over WebSocket: send a WebSocket upgrade", http.StatusUpgradeRequired)
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		http.Error(w, "mcptape: proxy shutting down", http.StatusServiceUnavailable)
		return
	}
	p.wg.Add(1)
	p.mu.Unlock()
	defer p.wg.Done()

	conn := p.nextConn.Add(1)
	s := &wsSession{p: p, id: "ws-" + strconv.FormatUint(conn, 10), x: p.nextX.Add(1), conn: conn, start: start}
	s.rc = newRecorder(p.rec, s.id, p.o.warnf)
	s.path = p.o.redact.requestURI(r.URL)
	ctx, cancel := context.WithTimeout(r.Context(), wsUpgradeTimeout)
	up, resp, err := p.dialUpstream(ctx, p.upstreamRequest(ctx, r), r.Header)
	if up == nil {
		p.refuse(w, r, s.x, conn, start, resp, err)
		if resp != nil && err == nil {
			resp.Body.Close()
		}
		cancel()
		return
	}
	cancel()
	client, pre, err := hijack(w, resp.Header)
	if err != nil {
		up.conn.Close()
		p.httpEvent(p.o.now(), "", s.x, &HTTPEvent{Phase: "end", Method: r.Method, Path: s.path, Host: r.Host,
			Conn: conn, Status: http.StatusSwitchingProtocols, ClosedBy: ClosedByClient, Error: err.Error()})
		return
	}
	p.st.sessions.Add(1)
	s.relay(client, up.conn, pre, up.pre)
	s.event(start, tape.EventOpen, "", &HTTPSessionEvent{Kind: "websocket", How: "upgrade", Conn: conn})
	p.httpEvent(start, s.id, s.x, &HTTPEvent{Phase: "response", Method: r.Method, Path: s.path, Host: r.Host, Conn: conn,
		Status: http.StatusSwitchingProtocols, RequestHeaders: p.o.redact.headers(r.Header), ResponseHeaders: p.o.redact.headers(resp.Header),
		WaitNs: int64(p.o.now().Sub(start))})
	s.run()
}

// upstreamRequest is the upgrade request to the upstream for the client's
// r: the client's headers (hop-by-hop ones aside), its key, version and
// subprotocol offers, so that the handshake is the client's own, end to
// end; its Origin unchanged, its Host as the HTTP proxy has it. The
// client's extension offers are not passed on: see the package doc on
// compression.
func (p *WSProxy) upstreamRequest(ctx context.Context, r *http.Request) *http.Request {
	u := *p.up
	u.Scheme = "http"
	if p.up.Scheme == "wss" {
		u.Scheme = "https"
	}
	u.Path, u.RawPath, u.RawQuery = r.URL.Path, r.URL.RawPath, r.URL.RawQuery
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil) // u parsed already
	h := stripHandshake(r.Header)
	for _, name := range headerTokens(r.Header, "Connection") {
		h.Del(name) // named hop-by-hop by the client
	}
	h["Connection"], h["Upgrade"] = []string{"Upgrade"}, []string{"websocket"}
	for _, k := range []string{"Sec-Websocket-Key", "Sec-Websocket-Version", "Sec-Websocket-Protocol"} {
		if v := r.Header[k]; len(v) > 0 {
			h[k] = v
		}
	}
	req.Header, req.Host = h, p.upstreamHost(r)
	return req
}

// checkUpgrade checks the headers rh of the upstream's 101 against the
// client's request headers h: a switch to websocket that answers the
// client's key with an offered subprotocol or none, and no extension.
func checkUpgrade(rh, h http.Header) error {
	sp := rh.Get("Sec-Websocket-Protocol")
	var err error
	switch {
	case !headerHasToken(rh, "Upgrade", "websocket") || !headerHasToken(rh, "Connection", "upgrade"):
		err = errors.New("the upstream switched protocols, but not to websocket")
	case rh.Get("Sec-Websocket-Accept") != wsAccept(h.Get("Sec-Websocket-Key")):
		err = fmt.Errorf("the upstream's Sec-WebSocket-Accept %q does not answer the key", rh.Get("Sec-Websocket-Accept"))
	case rh.Get("Sec-Websocket-Extensions") != "":
		err = fmt.Errorf("the upstream chose extensions %q that were not offered", rh.Get("Sec-Websocket-Extensions"))
	case sp != "" && !slices.Contains(headerTokens(h, "Sec-Websocket-Protocol"), sp):
		err = fmt.Errorf("the upstream chose subprotocol %q that was not offered", sp)
	}
	if err != nil {
		return fmt.Errorf("websocket upgrade: %w", err)
	}
	return nil
}

// hijack takes the client's connection over and answers its upgrade with
// the upstream's 101 and headers h, as they are. It returns the
// connection and the bytes the client sent after its request, if any.
func hijack(w http.ResponseWriter, h http.Header) (net.Conn, []byte, error) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("websocket upgrade: the server cannot hand the connection over")
	}
	conn, brw, err := hj.Hijack()
	if err != nil {
		return nil, nil, fmt.Errorf("websocket upgrade: %w", err)
	}
	_ = conn.SetDeadline(time.Time{}) // a server's timeouts end with the HTTP exchange
	var pre []byte
	if n := brw.Reader.Buffered(); n > 0 {
		b, _ := brw.Reader.Peek(n)
		pre = bytes.Clone(b)
	}
	var head bytes.Buffer
	head.WriteString("HTTP/1.1 101 Switching Protocols\r\n")
	_ = h.Write(&head)
	head.WriteString("\r\n")
	if _, err := conn.Write(head.Bytes()); err != nil {
		conn.Close()
		return nil, nil, fmt.Errorf("websocket upgrade: answering the client: %w", err)
	}
	return rawio.Wrap(conn), pre, nil
}
