//go:build !unix

package transport

import "net"

// peerClosed cannot look at an idle connection without blocking on this
// system: it reports false (the retry rules of the lean path still apply).
func peerClosed(net.Conn) bool { return false }
