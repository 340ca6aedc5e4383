package replay

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcptape/mcptape/tape"
)

// handTape writes an HTTP tape by hand: records of session "s" on the
// POST stream, a microsecond apart.
type handTape struct {
	t   *testing.T
	buf bytes.Buffer
	w   *tape.Writer
	at  int64
}

func newHandTape(t *testing.T) *handTape {
	h := &handTape{t: t}
	h.w = newTapeBuffer(t, &h.buf)
	return h
}

func (h *handTape) put(r tape.Record) {
	h.at += 1000
	r.Time, r.Session, r.Stream = h.at, "s", "post"
	h.w.Write(&r)
}

// msg writes a message of exchange x.
func (h *handTape) msg(dir tape.Direction, x uint64, frame string) {
	h.put(tape.Record{Type: tape.TypeMessage, Dir: dir, Exchange: x, Frame: []byte(frame)})
}

// status writes the HTTP answer's status and content type of exchange x.
func (h *handTape) status(x uint64, code int, contentType string) {
	h.put(tape.Record{Type: tape.TypeEvent, Event: tape.EventHTTP, Exchange: x,
		Data: fmt.Appendf(nil, `{"phase":"response","method":"POST","path":"/mcp","status":%d,"content_type":%q}`, code, contentType)})
}

// file ends the tape and returns the path of its file.
func (h *handTape) file() string {
	return writeTapeFile(h.t, h.w, &h.buf)
}

// writeTapeFile closes w, which writes to buf, and writes buf to a new
// tape file; it returns its path.
func writeTapeFile(t *testing.T, w *tape.Writer, buf *bytes.Buffer) string {
	t.Helper()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "t.jsonl.zst")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
