package capture

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/mcptape/mcptape/internal/rawio"
	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
	"github.com/mcptape/mcptape/transport"
)

// pumpBuffer is the size of each pump's read buffer: the capacity of a Linux
// pipe, so one read takes whatever the pipe holds.
const pumpBuffer = 64 << 10

// recorder stamps records with the session and hands them to the tape. Once
// closed it drops records silently, so that a goroutine outliving the run
// cannot write into a tape its owner has closed.
type recorder struct {
	mu      sync.RWMutex // held for reading while writing a record, for writing by close
	closed  bool
	w       RecordWriter
	cw      classifyingWriter // w, when it is one; else nil
	session string
	warnf   func(string, ...any)

	errOnce sync.Once
	err     atomic.Pointer[error]

	c2s, s2c, stderr, truncated, invalid atomic.Int64
	unordered                            atomic.Int64 // waits for the other direction that gave up
}

func newRecorder(w RecordWriter, session string, warnf func(string, ...any)) *recorder {
	cw, _ := w.(classifyingWriter)
	return &recorder{w: w, cw: cw, session: session, warnf: warnf}
}

// classifyingWriter is a RecordWriter that classifies a message's frame as
// it stores it (*tape.Writer): it must validate the frame anyway, and
// jsonrpc.Classify's one pass does both.
type classifyingWriter interface {
	WriteClassified(r *tape.Record) (jsonrpc.Info, error)
}

// message records message r (setting its session) and returns
// jsonrpc.Classify's verdict on its frame: the tape's when it classifies
// as it writes, so that the frame is parsed once.
func (rc *recorder) message(r *tape.Record) jsonrpc.Info {
	rc.mu.RLock()
	defer rc.mu.RUnlock()
	if rc.closed {
		return jsonrpc.Classify(r.Frame)
	}
	r.Session = rc.session
	if rc.cw == nil {
		if err := rc.w.Write(r); err != nil {
			rc.fail(err)
		}
		return jsonrpc.Classify(r.Frame)
	}
	info, err := rc.cw.WriteClassified(r)
	if err != nil {
		rc.fail(err)
	}
	return info
}

// write records r (setting its session).
func (rc *recorder) write(r *tape.Record) {
	rc.mu.RLock()
	defer rc.mu.RUnlock()
	if rc.closed {
		return
	}
	r.Session = rc.session
	if err := rc.w.Write(r); err != nil {
		rc.fail(err)
	}
}

// fail keeps the first recording error and reports it once. (A separate
// function, so that err does not escape on the write path.)
func (rc *recorder) fail(err error) {
	rc.errOnce.Do(func() {
		rc.err.Store(&err)
		rc.warnf("recording failed: %v (forwarding goes on)", err)
	})
}

// event records an event, now, whose payload is data encoded as JSON.
func (rc *recorder) event(name string, dir tape.Direction, data any) {
	rc.eventAt(time.Now().UnixNano(), name, dir, data)
}

// eventAt records an event at time t (Unix ns).
func (rc *recorder) eventAt(t int64, name string, dir tape.Direction, data any) {
	raw, err := json.Marshal(data)
	if err != nil { // cannot happen with the payload types below
		raw = nil
	}
	rc.write(&tape.Record{Type: tape.TypeEvent, Time: t, Dir: dir, Event: name, Data: raw})
}

// close stops recording; it waits for a write in progress.
func (rc *recorder) close() {
	rc.mu.Lock()
	rc.closed = true
	rc.mu.Unlock()
}

func (rc *recorder) firstErr() error {
	if p := rc.err.Load(); p != nil {
		return *p
	}
	return nil
}

// Event payloads. Field names are part of the tape format.
type (
	openData struct {
		Pid     int      `json:"pid"`
		Command []string `json:"command,omitempty"`
	}
	closeData struct {
		By string `json:"by"`
	}
	exitData struct {
		Code   int      `json:"code"`
		Signal string   `json:"signal,omitempty"`
		Sent   []string `json:"sent,omitempty"`
	}
	errorData struct {
		Error      string   `json:"error"`
		Command    []string `json:"command,omitempty"`
		Size       int64    `json:"size,omitempty"`       // truncated frame: its full length
		Kept       int      `json:"kept,omitempty"`       // truncated frame: bytes recorded
		Violations []string `json:"violations,omitempty"` // invalid frame: what is wrong
	}
	// stderrData is one line of the child's stderr: Line when it is valid
	// UTF-8, else B64 (standard base64), so that the bytes survive exactly.
	stderrData struct {
		Line      *string `json:"line,omitempty"`
		B64       string  `json:"b64,omitempty"`
		NoEOL     bool    `json:"noeol,omitempty"`
		Truncated bool    `json:"truncated,omitempty"`
		Size      int64   `json:"size,omitempty"` // full length when truncated
	}
)

// pump forwards one stream and records its lines.
type pump struct {
	rec      *recorder
	dir      tape.Direction // "" for stderr
	stderr   bool
	src      io.Reader
	dst      io.Writer
	framer   *transport.LineFramer
	onDstErr func(error)

	// Ordering with the opposite direction (see stdio_order.go); both nil
	// for stderr, which is not ordered against the messages.
	own, other *progress
	target     int64 // other's forwarded count when the current chunk was read
	waited     bool  // the current chunk's wait for other is over

	// raw, when not nil, is dst's raw connection (a pollable pipe named
	// rawName): see forwardRaw, whose state w is.
	raw     syscall.RawConn
	rawName string
	w       rawWrite

	now    int64       // when the current chunk was read (Unix ns)
	msg    tape.Record // reused for every message record
	dstErr error       // set once forwarding failed; recording goes on
}

func newPump(rec *recorder, dir tape.Direction, src io.Reader, dst io.Writer, maxFrame int) *pump {
	p := &pump{rec: rec, dir: dir, src: src, dst: dst}
	// NewLineFramer fails only on a nil emit or a negative maximum, which
	// StdioOptions.check has ruled out.
	p.framer, _ = transport.NewLineFramer(maxFrame, p.emit)
	return p
}

// run copies src to dst until src ends, recording each line. It returns
// src's error (nil at end-of-file).
func (p *pump) run() error {
	buf := make([]byte, pumpBuffer)
	for {
		n, err := p.src.Read(buf)
		if n > 0 {
			p.read()
			chunk := buf[:n]
			var seq int64
			if p.own != nil {
				seq = p.own.forwarding(p.now)
			}
			framed := 0 // bytes of chunk already framed (see forwardRaw)
			if p.dstErr == nil {
				var werr error
				if p.raw != nil {
					framed, werr = p.forwardRaw(chunk)
				} else {
					_, werr = p.dst.Write(chunk)
				}
				if werr != nil {
					p.dstErr = werr
					if p.onDstErr != nil {
						p.onDstErr(werr)
					}
				}
			}
			if p.own != nil {
				p.own.forwarded()
			}
			p.framer.Write(chunk[framed:]) // emit never fails
			if p.own != nil {
				p.own.recorded(seq)
			}
		}
		if err != nil {
			// The unfinished last line, if any, is recorded before run
			// returns, hence before the destination is closed: the peer
			// cannot have answered it yet.
			p.read()
			p.framer.Close()
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// forwardRaw writes chunk to dst through p.raw. When the reader is slow
// and the write must wait (the pipe is full), the bytes already written,
// which the reader may have read and answered, are framed and recorded
// before waiting, and p.own says so (it is parked): the other direction
// then need not wait for this write to end. It returns how many bytes of
// chunk it framed, and the write error.
func (p *pump) forwardRaw(chunk []byte) (framed int, err error) {
	w := &p.w
	if w.try == nil {
		w.try = p.write
	}
	w.chunk, w.off, w.framed, w.again, w.err = chunk, 0, 0, false, nil
	rerr := p.raw.Write(w.try)
	framed, err = w.framed, w.err
	w.chunk, w.err = nil, nil
	if err == nil {
		err = rerr
	}
	p.own.parked.Store(false)
	return framed, err
}

// rawWrite is the state of forwardRaw, kept in the pump so that a write
// allocates nothing.
type rawWrite struct {
	chunk       []byte
	off, framed int  // bytes of chunk written, and framed
	again       bool // write was called before for this chunk
	err         error
	try         func(fd uintptr) bool // pump.write, bound once
}

// write is one attempt of forwardRaw's write; it reports false when it
// must wait for room in the pipe.
func (p *pump) write(fd uintptr) bool {
	w := &p.w
	if w.again { // the pipe has room: writing again
		p.own.unpark(time.Now().UnixNano())
	}
	w.again = true
	for w.off < len(w.chunk) {
		n, werr := rawio.Write(fd, w.chunk[w.off:])
		w.off += n
		switch werr {
		case nil:
		case syscall.EINTR:
		case syscall.EAGAIN:
			// Recording is not waiting for the reader: while it
			// lasts, the other direction waits as for any recording.
			p.own.forwarded()
			p.framer.Write(w.chunk[w.framed:w.off])
			w.framed = w.off
			p.own.park()
			return false // wait until the pipe has room
		default:
			w.err = &os.PathError{Op: "write", Path: p.rawName, Err: werr}
			return true
		}
	}
	return true
}

// read notes the time a chunk (or the end of the stream) was read, which
// every record framed from it carries, and what it must be ordered after.
func (p *pump) read() {
	p.now = time.Now().UnixNano()
	if p.other != nil {
		p.target, p.waited = p.other.fwd.Load(), false
	}
}

// emit records one frame.
func (p *pump) emit(f transport.Frame) error {
	if p.other != nil && !p.waited {
		p.waited = true
		if !p.other.waitRecorded(p.target) {
			p.rec.unordered.Add(1)
		}
	}
	if p.stderr {
		p.emitStderr(f)
		return nil
	}
	p.msg = tape.Record{Type: tape.TypeMessage, Time: p.now, Dir: p.dir, Frame: f.Data, NoEOL: f.NoEOL}
	info := p.rec.message(&p.msg)
	if p.dir == tape.ClientToServer {
		p.rec.c2s.Add(1)
	} else {
		p.rec.s2c.Add(1)
	}
	if f.Truncated {
		p.rec.truncated.Add(1)
		p.rec.eventAt(p.now, tape.EventError, p.dir, errorData{Error: "frame truncated in the tape (forwarded whole)", Size: f.Size, Kept: len(f.Data)})
		return nil
	}
	if info.Kind == jsonrpc.KindInvalid {
		p.rec.invalid.Add(1)
		p.rec.eventAt(p.now, tape.EventError, p.dir, errorData{Error: "invalid JSON-RPC frame (forwarded as is)", Violations: info.Violations.Names()})
	}
	return nil
}

// emitStderr records one line of the child's stderr as an event.
func (p *pump) emitStderr(f transport.Frame) {
	d := stderrData{NoEOL: f.NoEOL, Truncated: f.Truncated}
	if f.Truncated {
		d.Size = f.Size
	}
	if utf8.Valid(f.Data) {
		s := string(f.Data)
		d.Line = &s
	} else {
		d.B64 = base64.StdEncoding.EncodeToString(f.Data)
	}
	p.rec.stderr.Add(1)
	p.rec.eventAt(p.now, tape.EventStderr, "", d)
}
