package main

import (
	"context"
	"strings"
	"time"

	"github.com/mcptape/mcptape/capture"
	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/transport"
)

// wsDialer is replay's dialer for a ws:// or wss:// --url: one WebSocket
// connection per session. hopts hold the --header values; copts the TLS
// settings, used for wss:// only (a plain ws:// upgrade goes through
// net/http's own client).
func wsDialer(rawURL string, hopts []transport.Option, copts []transport.ClientOption) (replay.DialFunc, string, string, error) {
	if len(copts) > 0 && strings.HasPrefix(strings.ToLower(rawURL), "wss:") {
		client, err := transport.NewHTTPClient(1, copts...)
		if err != nil {
			return nil, "", "", err
		}
		hopts = append(hopts, transport.WithHTTPClient(client))
	}
	return func(ctx context.Context, _ *replay.Session) (transport.Conn, error) {
		return transport.DialWebSocket(ctx, rawURL, hopts...)
	}, capture.RedactURL(rawURL), "ws", nil
}

// boundDial returns dial with its wait bounded by timeout: a WebSocket
// handshake, or a legacy SSE stream's headers and endpoint event (a
// server that never answers them held the replay for ever). nil stays
// nil.
func boundDial(dial replay.DialFunc, timeout time.Duration) replay.DialFunc {
	if dial == nil {
		return nil
	}
	return func(ctx context.Context, s *replay.Session) (transport.Conn, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return dial(ctx, s)
	}
}
