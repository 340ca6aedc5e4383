// Package transport frames MCP messages on the wire and connects to live
// MCP servers as a client.
//
// Framing turns a byte stream into frames (byte-exact messages) without
// decoding them: newline-delimited lines for stdio (lines.go) and
// Server-Sent Events for HTTP (sse.go). Connections ([Conn]) carry frames
// to and from one server session over stdio, Streamable HTTP or legacy
// HTTP+SSE (conn.go and the files it names).
//
// Line framing comes in two shapes over the same rules:
//
//   - [LineFramer] is push-style: a proxy that forwards bytes as they arrive
//     hands each chunk it has just forwarded to Write, and the framer calls
//     its emit function once per complete line. The proxy never waits for a
//     full line before forwarding; the framer only keeps a copy of the
//     unfinished line.
//   - [LineReader] is pull-style: Next returns the next line read from an
//     io.Reader, for clients that read a server's output.
//
// Framing rules, shared by both: a frame is a line without its "\n"; a "\r"
// before it is kept (the frame holds exactly the bytes that crossed the
// wire); a last line with no "\n" is a frame with NoEOL set (an empty tail
// is no frame). Frames longer than the configured maximum are cut to the
// maximum and flagged Truncated, with Size giving their full length; the
// bytes past the maximum are counted, never held in memory.
package transport

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxFrame is the default largest frame, in bytes, that a framer holds
// in memory (256 MiB). Longer frames are cut and flagged Truncated.
const DefaultMaxFrame = 256 << 20

// keepBuffer is the largest line buffer kept between lines; a buffer that
// grew larger for one big line is released so that memory does not stay at
// the size of the largest line ever seen.
const keepBuffer = 1 << 20

// Frame is one line of a newline-delimited stream.
//
// Data is valid only until the emit function returns (LineFramer) or until
// the next call to Next (LineReader); copy it to keep it.
type Frame struct {
	Data      []byte // the line without its "\n" ("\r" kept); at most the maximum frame size
	NoEOL     bool   // the stream ended without a "\n" after this line
	Truncated bool   // the line was longer than the maximum; Data holds its first bytes
	Size      int64  // full length of the line without "\n" (equals len(Data) unless Truncated)
}

// LineFramer splits the bytes written to it into newline-delimited frames
// and calls its emit function once for each, in order.
//
// A LineFramer is not safe for concurrent use: it belongs to the goroutine
// that forwards one direction of a stream.
type LineFramer struct {
	emit    func(Frame) error
	max     int
	buf     []byte // the unfinished line (at most max bytes)
	size    int64  // full length of the unfinished line
	pending bool   // an unfinished line has started
	closed  bool
}

// NewLineFramer returns a framer that calls emit for every complete line.
// maxFrame bounds the bytes held for one line (0 means DefaultMaxFrame); a
// negative value is an error. An error returned by emit stops the framer:
// Write returns it, and later calls return it again.
func NewLineFramer(maxFrame int, emit func(Frame) error) (*LineFramer, error) {
	if emit == nil {
		return nil, errors.New("transport: line framer: nil emit function")
	}
	max, err := checkMax(maxFrame)
	if err != nil {
		return nil, err
	}
	return &LineFramer{emit: emit, max: max}, nil
}

func checkMax(maxFrame int) (int, error) {
	if maxFrame < 0 {
		return 0, fmt.Errorf("transport: maximum frame size %d is negative", maxFrame)
	}
	if maxFrame == 0 {
		return DefaultMaxFrame, nil
	}
	return maxFrame, nil
}

// errFramerClosed is returned by Write after Close.
var errFramerClosed = errors.New("transport: write to closed line framer")

// Write frames p. It emits every line p completes, reusing p's memory for a
// line that lies wholly inside p, and keeps a copy of the unfinished tail.
// It always consumes all of p unless emit fails.
func (f *LineFramer) Write(p []byte) (int, error) {
	if f.closed {
		return 0, errFramerClosed
	}
	n := 0
	for n < len(p) {
		i := bytes.IndexByte(p[n:], '\n')
		if i < 0 {
			f.add(p[n:])
			return len(p), nil
		}
		line := p[n : n+i]
		var fr Frame
		if f.pending {
			f.add(line)
			fr = f.take()
		} else {
			fr = f.whole(line)
		}
		n += i + 1
		if err := f.emit(fr); err != nil {
			f.closed = true
			return n, err
		}
	}
	return n, nil
}

// whole frames a line that needs no copy.
func (f *LineFramer) whole(line []byte) Frame {
	fr := Frame{Data: line, Size: int64(len(line))}
	if len(line) > f.max {
		fr.Data, fr.Truncated = line[:f.max], true
	}
	return fr
}

// add appends part of the unfinished line, keeping at most max bytes.
func (f *LineFramer) add(b []byte) {
	f.pending = true
	f.size += int64(len(b))
	if room := f.max - len(f.buf); room > 0 {
		if len(b) > room {
			b = b[:room]
		}
		f.buf = append(f.buf, b...)
	}
}

// take returns the accumulated line as a frame and resets the state. The
// frame's Data stays valid until the next add.
func (f *LineFramer) take() Frame {
	fr := Frame{Data: f.buf, Size: f.size, Truncated: f.size > int64(len(f.buf))}
	if cap(f.buf) > keepBuffer {
		f.buf = nil
	} else {
		f.buf = f.buf[:0]
	}
	f.size, f.pending = 0, false
	return fr
}

// Close emits the unfinished last line, if any, flagged NoEOL. Writes after
// Close fail; Close is idempotent.
func (f *LineFramer) Close() error {
	if f.closed {
		return nil
	}
	f.closed = true
	if !f.pending {
		return nil
	}
	fr := f.take()
	fr.NoEOL = true
	return f.emit(fr)
}

// LineReader reads newline-delimited frames from an io.Reader, with no limit
// on line length other than its maximum frame size (beyond which lines are
// truncated, not rejected).
type LineReader struct {
	src  io.Reader
	max  int
	buf  []byte // read buffer; buf[r:w] is unread
	r, w int
	line []byte // the current frame when it spans reads
	err  error
}

// lineReadSize is the LineReader's read buffer size.
const lineReadSize = 64 << 10

// NewLineReader returns a LineReader on src. maxFrame bounds the bytes kept
// for one line (0 means DefaultMaxFrame; negative is an error).
func NewLineReader(src io.Reader, maxFrame int) (*LineReader, error) {
	if src == nil {
		return nil, errors.New("transport: line reader: nil source")
	}
	max, err := checkMax(maxFrame)
	if err != nil {
		return nil, err
	}
	return &LineReader{src: src, max: max, buf: make([]byte, lineReadSize)}, nil
}

// Next returns the next frame. At the end of the stream it returns io.EOF
// (after a last frame flagged NoEOL, if the stream did not end with "\n");
// a read error is returned wrapped once the frames before it are consumed.
func (r *LineReader) Next() (Frame, error) {
	r.line = r.line[:0]
	var size int64
	started := false
	for {
		if r.r < r.w {
			chunk := r.buf[r.r:r.w]
			i := bytes.IndexByte(chunk, '\n')
			part := chunk
			if i >= 0 {
				part = chunk[:i]
			}
			if i >= 0 && !started {
				// Fast path: the whole line is in the buffer.
				r.r += i + 1
				fr := Frame{Data: part, Size: int64(len(part))}
				if len(part) > r.max {
					fr.Data, fr.Truncated = part[:r.max], true
				}
				return fr, nil
			}
			started = true
			size += int64(len(part))
			if room := r.max - len(r.line); room > 0 {
				keep := part
				if len(keep) > room {
					keep = keep[:room]
				}
				r.line = append(r.line, keep...)
			}
			if i >= 0 {
				r.r += i + 1
				return r.frame(size, false), nil
			}
			r.r = r.w
		}
		if r.err != nil {
			if started {
				return r.frame(size, true), nil
			}
			if r.err == io.EOF {
				return Frame{}, io.EOF
			}
			return Frame{}, fmt.Errorf("transport: reading lines: %w", r.err)
		}
		r.r, r.w = 0, 0
		n, err := r.src.Read(r.buf)
		r.w = n
		if err != nil {
			r.err = err
		}
	}
}

// frame returns the accumulated line as a frame.
func (r *LineReader) frame(size int64, noEOL bool) Frame {
	fr := Frame{Data: r.line, Size: size, NoEOL: noEOL, Truncated: size > int64(len(r.line))}
	if cap(r.line) > keepBuffer {
		r.line = nil // released at the next call; fr still points at it
	}
	return fr
}
