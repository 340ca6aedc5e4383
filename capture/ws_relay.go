package capture

import (
	"crypto/rand"
	"io"
	"sync"
	"time"
)

// A pump reads what the socket holds, up to the size of its buffer, and
// forwards what it read in one write. The buffer starts at wsBufSize, the
// size of net/http's connection buffers (a thousand idle sessions pin 8
// MiB), and grows to wsBigBufSize once a read fills it: a big message is
// on its way.
const (
	wsBufSize    = 4 << 10
	wsBigBufSize = 64 << 10
)

// wsCloseGrace bounds how long a session lasts once its end has begun (a
// close frame seen, a side gone, the proxy closing): both connections are
// closed then, whatever the peers do.
const wsCloseGrace = 5 * time.Second

// wsOut is where the bytes of one direction go: the connection to the
// client or to the upstream. The pump of that direction forwards into it;
// the session may write a close frame of its own into it, between frames.
type wsOut struct {
	mu       sync.Mutex
	conn     io.Writer
	masked   bool // the proxy's own frames are masked (it is this side's client)
	boundary bool // what was written so far ends with a whole frame
	closed   bool // a close frame went out (forwarded or the proxy's)
	stopped  bool // nothing more goes out: the proxy closed it, or a write failed
}

// newWSOut returns the output into conn.
func newWSOut(conn io.Writer, masked bool) *wsOut {
	return &wsOut{conn: conn, masked: masked, boundary: true}
}

// forward writes b, the bytes a peer sent, unchanged. boundary tells
// whether b ends with a whole frame, close whether it holds a close frame.
func (o *wsOut) forward(b []byte, boundary, close bool) {
	if len(b) == 0 {
		return
	}
	o.mu.Lock()
	if !o.stopped {
		if _, err := o.conn.Write(b); err != nil {
			o.stopped = true // the side is gone: its own pump records how
		}
		o.boundary, o.closed = boundary, o.closed || close
	}
	o.mu.Unlock()
}

// sendClose ends the forwarding into o with a close frame of the proxy's
// own (code and reason), when o has had none and is between frames;
// otherwise, unless a close frame went out already, it ends o's stream
// (the peer sees the connection end).
func (o *wsOut) sendClose(code int, reason string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.stopped {
		return
	}
	o.stopped = true
	switch {
	case o.closed:
	case o.boundary:
		var key *[4]byte
		if o.masked {
			key = new([4]byte)
			_, _ = rand.Read(key[:])
		}
		_, _ = o.conn.Write(wsAppendFrame(nil, wsOpClose, wsClosePayload(code, reason), key))
		o.closed = true
	default:
		closeWrite(o.conn)
	}
}

// stop ends the forwarding into o: its peer is gone.
func (o *wsOut) stop() {
	o.mu.Lock()
	o.stopped = true
	o.mu.Unlock()
}

// end ends o's stream, as its source's ended: the peer reads the end of
// the connection after what was forwarded.
func (o *wsOut) end() {
	o.mu.Lock()
	o.stopped = true
	closeWrite(o.conn)
	o.mu.Unlock()
}

// closeWrite shuts c's writing side down, when c can (a TCP connection).
func closeWrite(c io.Writer) error {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// wsWay is one direction of a session: the bytes a side sends and where
// they go.
type wsWay struct {
	from  string // "client" or "upstream"
	in    io.Reader
	out   *wsOut // into the other side
	back  *wsOut // into in's own connection
	parse *wsParser
	pre   []byte // bytes read before the relay began
}

// pump relays w until its side is done: it reads what the socket holds,
// finds the frame boundaries in it (checking each header, copying text
// payloads for the tape), forwards the bytes it read unchanged in one
// write, and only then records the messages and control frames they
// completed. A
// frame header cut by the end of a read is held back (at most 13 bytes)
// and forwarded with the rest of its frame, so that what was forwarded
// always ends where the parser stands: a close frame of the proxy's own
// can follow it.
func (s *wsSession) pump(w *wsWay) {
	buf := make([]byte, max(wsBufSize, len(w.pre)+wsMaxHeader))
	n, have := copy(buf, w.pre), 0
	var err error
	for {
		have += n
		now := s.p.o.now()
		used, perr := w.parse.feed(buf[:have])
		closing := false
		for i := range w.parse.items {
			closing = closing || w.parse.items[i].op == wsOpClose
		}
		if closing {
			s.settle(w.by(), "close-frame") // before the other side can answer it
		}
		w.out.forward(buf[:used], w.parse.atBoundary(), closing)
		s.record(w, now)
		if perr != nil {
			s.refused(w, now, perr)
			for err == nil {
				_, err = w.in.Read(buf) // until the side goes (or the grace ends)
			}
			err = nil
		}
		if err != nil || perr != nil {
			s.inputEnded(w, now, err)
			return
		}
		tail := buf[used:have]
		if have == len(buf) && len(buf) < wsBigBufSize {
			buf = make([]byte, wsBigBufSize)
		}
		have = copy(buf, tail)
		n, err = w.in.Read(buf[have:])
	}
}
