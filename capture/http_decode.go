package capture

// Compressed bodies. A body with a gzip or deflate Content-Encoding is
// forwarded as it came and recorded decoded. Decoding is the one place
// where the recorder could hold far more than it received (a 1 MiB gzip
// body can hold 1 GiB), so the decoded bytes are bounded twice:
//
//   - per body: at most WithMaxDecoded bytes (DefaultMaxDecoded) of one
//     decoded body, or of one event of a decoded event stream, are kept;
//   - per proxy: the decoded bytes all exchanges hold at once come out of
//     one budget (WithDecodeBudget, DefaultDecodeBudget). A body that finds
//     the budget spent is recorded cut where it stood.
//
// Decoding is a stream: it stops as soon as nothing more would be kept (a
// response's decoder then passes the rest of the compressed bytes through
// unread), so a bomb costs the CPU and memory of the cap, not of its
// size. A body recorded cut has an "error" event with "truncated":true
// just before its message (docs/tape-format.md, 4.6).

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
)

// Defaults of the bounds on decoded bodies.
const (
	// DefaultMaxDecoded is the most bytes kept of one decoded body, or of
	// one event of a decoded event stream.
	DefaultMaxDecoded = 8 << 20
	// DefaultDecodeBudget is the most decoded bytes all exchanges of a
	// proxy hold at once.
	DefaultDecodeBudget = 32 << 20
)

// WithMaxDecoded bounds the bytes recorded of one body decoded from a gzip
// or deflate Content-Encoding, or of one event of a decoded event stream
// (default DefaultMaxDecoded; it must be positive). Longer ones are
// forwarded whole and recorded cut. WithMaxBody bounds them too.
func WithMaxDecoded(n int) HTTPOption {
	return func(o *httpOptions) error {
		if n <= 0 {
			return fmt.Errorf("max decoded %d: must be positive", n)
		}
		o.maxDecoded = n
		return nil
	}
}

// WithDecodeBudget bounds the decoded bytes that all exchanges hold at once
// (default DefaultDecodeBudget; it must be positive). A decoded body that
// finds the budget spent is recorded cut.
func WithDecodeBudget(n int) HTTPOption {
	return func(o *httpOptions) error {
		if n <= 0 {
			return fmt.Errorf("decode budget %d: must be positive", n)
		}
		o.decodeBudget = n
		return nil
	}
}

// decodeBudget hands out the decoded bytes the exchanges of a proxy may
// hold at once. It is safe for concurrent use.
type decodeBudget struct {
	perBody int // bytes one body may hold
	mu      sync.Mutex
	left    int
}

func newDecodeBudget(perBody, total int) *decodeBudget {
	return &decodeBudget{perBody: perBody, left: total}
}

// body returns a hold for one decoded body, up to the per-body bound.
func (b *decodeBudget) body() decodeHold { return decodeHold{b: b, limit: b.perBody} }

// stream returns a hold for the event being built from a decoded event
// stream: the framer bounds each event, the hold only the total.
func (b *decodeBudget) stream() decodeHold { return decodeHold{b: b, limit: math.MaxInt} }

// decodeHold is the share of a decodeBudget that one decoded body (or the
// event being built from a decoded stream) holds. Its methods are called
// by one goroutine at a time.
type decodeHold struct {
	b      *decodeBudget
	limit  int    // the most it may hold
	held   int    // bytes held
	capped string // why the last take got less than it asked ("" if it did not)
}

// Why a decoded body was cut (decodeHold.capped).
const (
	cappedBody   = "max-decoded"
	cappedBudget = "decode-budget"
)

// take reserves up to n more bytes and returns how many it got: fewer
// than n once the body's cap or the budget is reached (then capped says
// which).
func (h *decodeHold) take(n int) int {
	b := h.b
	got := min(n, h.limit-h.held)
	h.capped = ""
	if got < n {
		h.capped = cappedBody
	}
	b.mu.Lock()
	if got > b.left {
		got, h.capped = b.left, cappedBudget
	}
	got = max(got, 0)
	b.left -= got
	b.mu.Unlock()
	h.held += got
	return got
}

// keep gives back what is held beyond n bytes.
func (h *decodeHold) keep(n int) {
	if n >= h.held {
		return
	}
	h.b.mu.Lock()
	h.b.left += h.held - n
	h.b.mu.Unlock()
	h.held = n
}

// release gives back everything held.
func (h *decodeHold) release() { h.keep(0) }

// reason says in words why a body was cut.
func (h *decodeHold) reason() string {
	if h.capped == cappedBudget {
		return "the decode budget of the proxy is in use by other exchanges"
	}
	return fmt.Sprintf("decoded bodies are recorded up to %d bytes", h.limit)
}

// openDecoder returns a reader of the body r encoded with enc (gzip or
// deflate).
func openDecoder(enc string, r io.Reader) (io.Reader, error) {
	switch strings.ToLower(enc) {
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("content encoding %s: %w", enc, err)
		}
		return zr, nil
	case "deflate":
		return newDeflateReader(r), nil
	}
	return nil, fmt.Errorf("content encoding %q is not decoded", enc)
}

// decodeBody decodes a whole gzip or deflate body into at most what h
// grants, and says whether it was cut there. Nothing is decoded beyond
// that point. The caller releases h once it is done with the result.
func decodeBody(enc string, body []byte, h *decodeHold) (out []byte, cut bool, err error) {
	r, err := openDecoder(enc, bytes.NewReader(body))
	if err != nil {
		return nil, false, err
	}
	err = decodeInto(r, func(b []byte) bool {
		got := h.take(len(b))
		out = append(out, b[:got]...)
		cut = got < len(b)
		return !cut
	})
	if err != nil {
		return out, cut, fmt.Errorf("content encoding %s: %w", enc, err)
	}
	return out, cut, nil
}

// decodeChunk is the unit in which bodies are decoded.
const decodeChunk = 32 << 10

// bodyDecoder decodes a compressed response body for the recorder, on a
// goroutine of its own, while the compressed bytes are forwarded as they
// are.
type bodyDecoder struct {
	pw   *io.PipeWriter
	done chan struct{}
	err  error
}

// errDecoderStopped unblocks writers once the decoder has stopped.
var errDecoderStopped = errors.New("decoder stopped")

// newBodyDecoder starts decoding a body with Content-Encoding enc (gzip or
// deflate) into sink. When sink returns false (it keeps nothing more),
// decoding stops and the rest of the input is consumed unread.
func newBodyDecoder(enc string, sink func([]byte) bool) (*bodyDecoder, error) {
	if !isGzip(enc) && !strings.EqualFold(enc, "deflate") {
		return nil, fmt.Errorf("content encoding %q is not decoded", enc)
	}
	pr, pw := io.Pipe()
	d := &bodyDecoder{pw: pw, done: make(chan struct{})}
	go func() {
		defer close(d.done)
		r, err := openDecoder(enc, pr)
		if err == nil {
			if err = decodeInto(r, sink); err != nil {
				err = fmt.Errorf("content encoding %s: %w", enc, err)
			}
		}
		if err != nil {
			d.err = err
		}
		io.Copy(io.Discard, pr) // what the recorder no longer wants, or cannot decode
		pr.CloseWithError(errDecoderStopped)
	}()
	return d, nil
}

// isGzip reports whether enc names gzip.
func isGzip(enc string) bool {
	return strings.EqualFold(enc, "gzip") || strings.EqualFold(enc, "x-gzip")
}

// decodeInto reads r into sink until its end, an error, or sink wants no
// more.
func decodeInto(r io.Reader, sink func([]byte) bool) error {
	buf := make([]byte, decodeChunk)
	for {
		n, err := r.Read(buf)
		if n > 0 && !sink(buf[:n]) {
			return nil
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// write hands compressed bytes to the decoder; it returns once they are
// consumed (or the decoder has stopped).
func (d *bodyDecoder) write(b []byte) { d.pw.Write(b) }

// close ends the input and waits for the decoder.
func (d *bodyDecoder) close() error {
	d.pw.Close()
	<-d.done
	return d.err
}

// newDeflateReader reads an HTTP "deflate" body: zlib-wrapped as the
// standard says, or raw deflate as some servers send it.
func newDeflateReader(r io.Reader) io.Reader {
	br := bufio.NewReader(r)
	if h, err := br.Peek(2); err == nil && h[0]&0x0f == 8 && (int(h[0])<<8|int(h[1]))%31 == 0 {
		if zr, err := zlib.NewReader(br); err == nil {
			return zr
		}
	}
	return flate.NewReader(br)
}
