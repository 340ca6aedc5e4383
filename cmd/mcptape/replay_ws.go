package main

import (
	"context"
	"strings"

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
