package transport

import (
	"bufio"
	"net"

	"github.com/mcptape/mcptape/internal/http1"
)

// IdlePeek looks at an idle keep-alive connection without waiting and
// without consuming anything (see Quiet). It is internal/http1's, which
// both HTTP/1.1 clients of mcptape use.
type IdlePeek = http1.IdlePeek

// NewIdlePeek returns a look at nc, whose bytes br reads (see
// http1.NewIdlePeek).
func NewIdlePeek(nc net.Conn, br *bufio.Reader) *IdlePeek { return http1.NewIdlePeek(nc, br) }
