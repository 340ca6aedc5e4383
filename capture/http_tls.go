package capture

// The HTTPS listener (WithTLS). It offers HTTP/1.1 only (ALPN
// "http/1.1", no "h2"): every connection then takes the same paths as a
// plain one, the lean path first, and its exchanges are recorded and
// grouped exactly as over plain HTTP. MCP's Streamable HTTP needs nothing
// of HTTP/2 (a client holds one session with few requests at once, and
// event streams work over HTTP/1.1), and every MCP client speaks HTTP/1.1
// over TLS; the upstream side is independent and may speak HTTP/2.

import (
	"crypto/tls"
	"errors"
	"net"
)

// WithTLS makes Serve speak HTTPS with cfg (which must hold a
// certificate, or a GetCertificate or GetConfigForClient hook). The
// listener offers HTTP/1.1 only, whatever cfg.NextProtos says, and at
// least TLS 1.2.
func WithTLS(cfg *tls.Config) HTTPOption {
	return func(o *httpOptions) error {
		if cfg == nil || (len(cfg.Certificates) == 0 && cfg.GetCertificate == nil && cfg.GetConfigForClient == nil) {
			return errors.New("tls: no certificate")
		}
		c := cfg.Clone()
		c.NextProtos = []string{"http/1.1"}
		c.MinVersion = max(c.MinVersion, tls.VersionTLS12)
		o.tls = c
		return nil
	}
}

// listener wraps ln in TLS when the proxy serves HTTPS. The handshake
// happens on each connection's first read, on its own goroutine.
func (p *HTTPProxy) listener(ln net.Listener) net.Listener {
	if p.o.tls == nil {
		return ln
	}
	return tls.NewListener(ln, p.o.tls)
}
