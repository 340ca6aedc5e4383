//go:build !unix

package http1

import "net"

// IdlePeek cannot look at an idle connection without blocking on this
// system: Quiet reports true (a closed connection is found out by using
// it, and the retry rules apply).
type IdlePeek struct{}

// NewIdlePeek returns a look that always reports a quiet connection.
func NewIdlePeek(net.Conn) *IdlePeek { return &IdlePeek{} }

// Quiet reports true.
func (*IdlePeek) Quiet() bool { return true }
