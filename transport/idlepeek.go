package transport

import (
	"net"

	"github.com/mcptape/mcptape/internal/http1"
)

// IdlePeek looks at an idle keep-alive connection without waiting and
// without consuming anything (see Quiet). It is internal/http1's, which
// both HTTP/1.1 clients of mcptape use.
type IdlePeek = http1.IdlePeek

// NewIdlePeek returns a look at nc (a connection without a socket, such
// as a TLS wrapper, cannot be looked at: Quiet then reports true).
func NewIdlePeek(nc net.Conn) *IdlePeek { return http1.NewIdlePeek(nc) }
