package capture

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/mcptape/mcptape/tape"
)

// wsTestClientKey is the Sec-WebSocket-Key of the hand-made clients.
const wsTestClientKey = "dGhlIHNhbXBsZSBub25jZQ=="

// dialRawWS opens a WebSocket connection to url by hand, with the header
// lines hdr, sending early right after the upgrade request (in the same
// write). It returns the connection, positioned after the response head,
// and the response.
func dialRawWS(t *testing.T, url, hdr string, early []byte) (net.Conn, *bufio.Reader, *http.Response) {
	t.Helper()
	u, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
	req := "GET " + u.RequestURI() + " HTTP/1.1\r\nHost: " + u.Host + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: " + wsTestClientKey + "\r\nSec-WebSocket-Version: 13\r\n" + hdr + "\r\n"
	if _, err := conn.Write(append([]byte(req), early...)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	return conn, br, resp
}

// rawWSUpstream is an upstream that speaks WebSocket by hand. It answers
// an upgrade with the 101 head that head makes of the right
// Sec-WebSocket-Accept, followed by first in the same write; then it
// reads what comes until a close frame (or the end), sends everything it
// read to got, writes reply and closes.
func rawWSUpstream(t *testing.T, head func(accept string) string, first, reply []byte, got chan<- []byte) *httptest.Server {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, brw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(20 * time.Second))
		resp := "HTTP/1.1 101 Switching Protocols\r\n" + head(wsAccept(r.Header.Get("Sec-Websocket-Key"))) + "\r\n"
		if _, err := conn.Write(append([]byte(resp), first...)); err != nil {
			return
		}
		p := newWSParser(true, 1<<20)
		var all []byte
		buf := make([]byte, 4096)
		for !p.closed {
			n, err := brw.Read(buf)
			all = append(all, buf[:n]...)
			if err != nil {
				break
			}
			if _, err := p.feed(all[p.pos:]); err != nil {
				break
			}
		}
		if got != nil {
			got <- all
		}
		_, _ = conn.Write(reply)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// wsHead101 is a plain 101 head.
func wsHead101(accept string) string {
	return "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + accept + "\r\n"
}

// TestWSProxyForwardsFramesUnchanged checks that the bytes of both sides
// reach the other unchanged (masks, fragments, control frames, a header
// cut between two writes, bytes sent with the handshake), and that the
// tape holds each text message once, reassembled.
func TestWSProxyForwardsFramesUnchanged(t *testing.T) {
	clientFrames := [][]byte{
		rawFrame(0x01, `{"jsonrpc":"2.0",`, true, false),
		rawFrame(0x89, "ping?", true, false),
		rawFrame(0x80, `"method":"a"}`, true, false),
		rawFrame(0x82, "\x00\xff", true, false),
		rawFrame(0x81, `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`, true, true),
		rawFrame(0x88, string(wsClosePayload(1000, "bye")), true, false),
	}
	first := rawFrame(0x81, `{"jsonrpc":"2.0","method":"notifications/hello"}`, false, false)
	reply := cat(rawFrame(0x01, `{"jsonrpc":"2.0","id":1,`, false, false), rawFrame(0x8a, "pong!", false, false),
		rawFrame(0x80, `"result":{}}`, false, false), rawFrame(0x88, string(wsClosePayload(1000, "ok")), false, false))
	got := make(chan []byte, 1)
	up := rawWSUpstream(t, wsHead101, first, reply, got)
	url, _, m := newWSProxy(t, up, "/mcp")

	conn, br, resp := dialRawWS(t, url, "", clientFrames[0])
	if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("Sec-Websocket-Accept") != wsAccept(wsTestClientKey) {
		t.Fatalf("upgrade: %d %v", resp.StatusCode, resp.Header)
	}
	rest := cat(clientFrames[1:]...)
	cut := len(clientFrames[1]) + len(clientFrames[2]) + len(clientFrames[3]) + 5 // inside the batch's 14-byte header
	for _, part := range [][]byte{rest[:cut], rest[cut:]} {
		if _, err := conn.Write(part); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond) // two reads on the other side, most likely; either way the bytes must match
	}
	if want := cat(clientFrames...); string(<-got) != string(want) {
		t.Errorf("the upstream received other bytes than the client sent")
	}
	back, err := io.ReadAll(br)
	if err != nil {
		t.Fatal(err)
	}
	if want := cat(first, reply); string(back) != string(want) {
		t.Errorf("the client received %q, want %q", back, want)
	}
	conn.Close()
	waitFor(t, sessionClosed(m, "ws-1"))
	recs := m.records()
	var msgs []string // client's first, each side in order
	for _, dir := range []tape.Direction{tape.ClientToServer, tape.ServerToClient} {
		for _, r := range recs {
			if r.Type == tape.TypeMessage && r.Dir == dir {
				msgs = append(msgs, string(r.Dir)+" "+string(r.Frame))
			}
		}
	}
	want := []string{
		"c2s " + `{"jsonrpc":"2.0","method":"a"}`,
		"c2s " + `[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`,
		"s2c " + `{"jsonrpc":"2.0","method":"notifications/hello"}`,
		"s2c " + `{"jsonrpc":"2.0","id":1,"result":{}}`,
	}
	if strings.Join(msgs, "\n") != strings.Join(want, "\n") {
		t.Errorf("messages recorded:\n%s\nwant:\n%s", strings.Join(msgs, "\n"), strings.Join(want, "\n"))
	}
	for _, ev := range []struct {
		kind string
		dir  tape.Direction
		want WSEvent
	}{
		{"ping", tape.ClientToServer, WSEvent{Kind: "ping", Bytes: 5, B64: "cGluZz8="}},
		{"binary", tape.ClientToServer, WSEvent{Kind: "binary", Bytes: 2, B64: "AP8="}},
		{"close", tape.ClientToServer, WSEvent{Kind: "close", Code: 1000, Reason: "bye"}},
		{"pong", tape.ServerToClient, WSEvent{Kind: "pong", Bytes: 5, B64: "cG9uZyE="}},
		{"close", tape.ServerToClient, WSEvent{Kind: "close", Code: 1000, Reason: "ok"}},
	} {
		if got := wsEvents(recs, ev.kind, ev.dir); len(got) != 1 || got[0] != ev.want {
			t.Errorf("%s %s events %+v, want %+v", ev.dir, ev.kind, got, ev.want)
		}
	}
	checkClose(t, recs, ClosedByClient, "close-frame")
}

// TestWSProxyRefusesBadFrames checks that a frame that breaks RFC 6455
// is not forwarded, is recorded with what and where, and ends the session
// with status 1002 to the client.
func TestWSProxyRefusesBadFrames(t *testing.T) {
	good := rawFrame(0x81, `{"jsonrpc":"2.0","method":"x"}`, true, false)
	tests := []struct {
		name   string
		stream []byte
		want   string
	}{
		{"unmasked", rawFrame(0x81, "x", false, false), "client frame 1 at byte 0: unmasked frame (a client must mask)"},
		{"reserved bit (compressed)", rawFrame(0xc1, "x", true, false), "client frame 1 at byte 0: reserved bits 0x40 set"},
		{"unknown opcode after a good frame", cat(good, rawFrame(0x83, "", true, false)),
			"client frame 2 at byte 36: unknown opcode 0x3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, p, m := newWSProxy(t, scriptedWSUpstream(t, nil), "/mcp")
			conn, br, resp := dialRawWS(t, url, "", nil)
			if resp.StatusCode != http.StatusSwitchingProtocols {
				t.Fatalf("upgrade: %d", resp.StatusCode)
			}
			if _, err := conn.Write(tt.stream); err != nil {
				t.Fatal(err)
			}
			back, err := io.ReadAll(br)
			if err != nil {
				t.Fatal(err)
			}
			items := parseStream(back, false, 1<<20, 0).Items
			if len(items) == 0 || !strings.HasPrefix(items[len(items)-1], "close:1002:") {
				t.Errorf("the client received %q, want a close frame with status 1002 last", items)
			}
			conn.Close()
			waitFor(t, sessionClosed(m, "ws-1"))
			recs := m.records()
			var errs []string
			for _, r := range recs {
				if r.Event == tape.EventError {
					var e errorData
					_ = json.Unmarshal(r.Data, &e)
					errs = append(errs, e.Error)
				}
			}
			if len(errs) != 1 || !strings.Contains(errs[0], tt.want) {
				t.Errorf("error events %q, want one with %q", errs, tt.want)
			}
			checkClose(t, recs, ClosedByProxy, "protocol-error")
			if st := p.Stats(); st.ClientMessages != int64(strings.Count(tt.name, "good")) {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// TestWSProxyHandshake checks the upgrade end to end: a client that offers
// no subprotocol or "mcp" gets what the upstream chose, and an offer of
// compression does not reach the upstream (which would accept it).
func TestWSProxyHandshake(t *testing.T) {
	tests := []struct {
		name     string
		opts     *websocket.DialOptions
		wantProt string
	}{
		{"no subprotocol", &websocket.DialOptions{}, ""},
		{"mcp", &websocket.DialOptions{Subprotocols: []string{"mcp"}}, "mcp"},
		{"other, then mcp", &websocket.DialOptions{Subprotocols: []string{"other", "mcp"}}, "mcp"},
		{"permessage-deflate offered", &websocket.DialOptions{Subprotocols: []string{"mcp"}, CompressionMode: websocket.CompressionContextTakeover}, "mcp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := make(chan *http.Request, 1)
			url, _, m := newWSProxy(t, scriptedWSUpstream(t, seen), "/mcp")
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c, resp, err := websocket.Dial(ctx, url, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseNow()
			if r := <-seen; r.Header.Get("Sec-Websocket-Extensions") != "" || resp.Header.Get("Sec-Websocket-Extensions") != "" {
				t.Errorf("extensions offered upstream %q, chosen %q", r.Header.Get("Sec-Websocket-Extensions"), resp.Header.Get("Sec-Websocket-Extensions"))
			}
			if c.Subprotocol() != tt.wantProt {
				t.Errorf("subprotocol %q, want %q", c.Subprotocol(), tt.wantProt)
			}
			msg := `{"jsonrpc":"2.0","method":"n","params":{"text":"` + strings.Repeat("compressible ", 100) + `"}}`
			if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
				t.Fatal(err)
			}
			if _, data, err := c.Read(ctx); err != nil || string(data) != msg {
				t.Fatalf("echo %.40q %v", data, err)
			}
			if err := c.Close(websocket.StatusNormalClosure, ""); err != nil {
				t.Logf("close: %v", err)
			}
			waitFor(t, sessionClosed(m, "ws-1"))
			n := 0
			for _, r := range m.records() {
				if r.Type == tape.TypeMessage && string(r.Frame) == msg {
					n++
				}
			}
			if n != 2 {
				t.Errorf("the message is in the tape %d times, want 2 (both ways, as text)", n)
			}
		})
	}
}

// TestWSProxyBadUpstream101 checks that a 101 the client must not see (an
// extension nobody offered, an accept that does not answer the key) is
// answered 502 and recorded.
func TestWSProxyBadUpstream101(t *testing.T) {
	tests := []struct {
		name string
		head func(string) string
		want string
	}{
		{"extension", func(a string) string { return wsHead101(a) + "Sec-WebSocket-Extensions: permessage-deflate\r\n" },
			`chose extensions \"permessage-deflate\" that were not offered`},
		{"wrong accept", func(string) string { return wsHead101(wsAccept("another key")) }, "does not answer the key"},
		{"not websocket", func(a string) string {
			return "Upgrade: h2c\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " + a + "\r\n"
		},
			"not to websocket"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url, p, m := newWSProxy(t, rawWSUpstream(t, tt.head, nil, nil, nil), "/mcp")
			_, _, resp := dialRawWS(t, url, "", nil)
			if resp.StatusCode != http.StatusBadGateway {
				t.Errorf("client saw %d, want 502", resp.StatusCode)
			}
			recs := m.records()
			if len(recs) != 1 || !strings.Contains(string(recs[0].Data), tt.want) || !strings.Contains(string(recs[0].Data), `"status":502`) {
				t.Errorf("%d records, the first: %s", len(recs), recs[0].Data)
			}
			if p.Stats().Refused != 1 {
				t.Errorf("stats %+v", p.Stats())
			}
		})
	}
}

// TestWSProxyTLSUpstream records a session with a wss:// upstream.
func TestWSProxyTLSUpstream(t *testing.T) {
	up := httptest.NewTLSServer(scriptedWSHandler(nil))
	defer up.Close()
	url, p, m := newWSProxyTo(t, "wss"+strings.TrimPrefix(up.URL, "https")+"/mcp", WithInsecureTLS(true))
	ctx, c := dialWS(t, url)
	msg := `{"jsonrpc":"2.0","method":"over-tls"}`
	if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	if _, data, err := c.Read(ctx); err != nil || string(data) != msg {
		t.Fatalf("echo %q %v", data, err)
	}
	_ = c.Close(websocket.StatusNormalClosure, "")
	waitFor(t, sessionClosed(m, "ws-1"))
	if st := p.Stats(); st.ClientMessages != 1 || st.ServerMessages != 1 {
		t.Errorf("stats %+v", st)
	}
}
