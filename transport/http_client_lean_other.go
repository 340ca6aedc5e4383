//go:build !unix

package transport

import "net"

// connPeek cannot look at an idle connection without blocking on this
// system: peerClosed reports false (the retry rules of the lean path
// still apply).
type connPeek struct{}

func newConnPeek(net.Conn) *connPeek { return &connPeek{} }

func (*connPeek) peerClosed() bool { return false }
