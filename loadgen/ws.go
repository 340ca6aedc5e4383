package loadgen

import (
	"crypto/tls"
	"net/http"

	"github.com/mcptape/mcptape/transport"
)

// wsTransportOptions completes out (the options of every transport) for a
// ws:// or wss:// target: the extra headers go on the upgrade request,
// WithInsecureTLS gives the upgrades a client that accepts any certificate,
// and WithWSSubprotocols changes the subprotocols offered.
// The shared HTTP client is not used otherwise (its lean HTTP/1.1 path
// does not hand over upgraded connections; each WebSocket is its own TCP
// connection anyway), nor the protocol version header, which WebSocket
// does not have.
func (o *options) wsTransportOptions(out []transport.Option) []transport.Option {
	if len(o.header) > 0 {
		out = append(out, transport.WithHeader(o.header))
	}
	if o.insecure {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // asked for with --insecure
		out = append(out, transport.WithHTTPClient(&http.Client{Transport: tr}))
	}
	if o.wsProtos != nil {
		out = append(out, transport.WithWSSubprotocols(o.wsProtos...))
	}
	return out
}
