//go:build !unix || mcptape_portable

package capture

import "os"

// The portable path: without raw pipe I/O (Windows, or any build with the
// mcptape_portable tag, which forces this path on Linux so that its tests
// run there), every pump reads its source through io.Reader and writes its
// destination through io.Writer, blocking in the system call.

// openClientPipes keeps the client's stdin and stdout as they are.
func (r *run) openClientPipes() {}

// closeClientPipes has nothing to close: openClientPipes opened nothing.
func (r *run) closeClientPipes() {}

// setRaw leaves p reading and writing through its io.Reader and io.Writer.
func setRaw(*pump, *os.File, string, *os.File) {}
