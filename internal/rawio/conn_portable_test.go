//go:build !linux || mcptape_portable

package rawio

import (
	"net"
	"testing"
)

// TestWrapPortable: without the Linux fast path (other systems, or the
// mcptape_portable tag), Wrap hands the connection back as it is.
func TestWrapPortable(t *testing.T) {
	c, s := net.Pipe()
	defer c.Close()
	defer s.Close()
	if Wrap(c) != c {
		t.Error("Wrap changed the connection on the portable path")
	}
}
