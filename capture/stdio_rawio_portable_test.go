//go:build !unix || mcptape_portable

package capture

import (
	"os"
	"testing"

	"github.com/mcptape/mcptape/tape"
)

// TestSetRawPortable: on the portable path a pump keeps reading and
// writing through os.File, with no raw connection.
func TestSetRawPortable(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	p := newPump(newRecorder(&memTape{}, "1", func(string, ...any) {}), tape.ClientToServer, r, w, 0)
	setRaw(p, r, "r", w)
	if p.raw != nil || p.src != r {
		t.Errorf("setRaw on the portable path: raw %v, src %T", p.raw, p.src)
	}
}
