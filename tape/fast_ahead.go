package tape

import (
	"bufio"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// This file lets a Reader decompress frames ahead of the records it
// returns, on goroutines of its own: the Writer's frames are independent,
// so while the caller parses the records of one frame the next ones are
// being decompressed on other cores.
//
//	producer:  readFrame, readFrame, ...   (file order, one goroutine)
//	               │ work            │ order (a result channel per frame)
//	workers:   DecodeAll ...         │
//	               └───────────────► fill takes the results in file order
//
// Results come back in file order whatever the worker that made them, so
// the Reader behaves exactly as without decode-ahead: the same records,
// the same warnings at the same places. A frame too big to check in
// memory stops the producer; fill then decodes it and the rest as a
// stream, as it would have done anyway.

// maxAheadWorkers bounds DecodeAhead's workers.
const maxAheadWorkers = 16

// ahead is the decode-ahead pipeline of a Reader.
type ahead struct {
	order chan chan aheadFrame // one channel per frame, in file order
	work  chan aheadJob
	bufs  chan []byte // decompressed buffers the Reader is done with
	raws  chan []byte // compressed buffers the workers are done with
	quit  chan struct{}
	wg    sync.WaitGroup // the workers
	stop  sync.Once
}

// aheadJob is one frame to decompress.
type aheadJob struct {
	raw    []byte
	frames int64 // number of this frame
	at     int64 // its input offset
	out    chan aheadFrame
}

// aheadFrame is one frame's outcome, in file order: its decompressed
// bytes, or the error fill returns for it (io.EOF at the clean end,
// errTooBig with head holding the frame's bytes read so far), and the
// Reader's frame count and input offset after it.
type aheadFrame struct {
	buf, head   []byte
	err         error
	frames, off int64
}

// DecodeAhead makes the Reader decompress up to 2*workers frames ahead of
// the records it returns, with workers goroutines of its own (1 to 16);
// call it before reading records. It changes nothing in what the Reader
// returns, only how fast: worth it for a reader that has other work to do
// per record (the analysis of a tape), on a machine with a core to spare.
// A second call changes nothing. The input is read ahead too: from then
// on, the Reader reads its source from another goroutine. It holds up to
// about 2*workers+2 more frames (compressed and decompressed) than
// without: a few MiB for the Writer's frames of 1 MiB. Close stops the
// goroutines.
func (r *Reader) DecodeAhead(workers int) error {
	switch {
	case workers < 1 || workers > maxAheadWorkers:
		return fmt.Errorf("tape: decode-ahead workers %d: must be 1 to %d", workers, maxAheadWorkers)
	case r.ahead != nil || r.done || r.err != nil || r.stream != nil || r.dec == nil:
		return nil // started already, or nothing more to decode in memory
	}
	a := &ahead{
		order: make(chan chan aheadFrame, 2*workers),
		work:  make(chan aheadJob, workers),
		bufs:  make(chan []byte, workers+1),
		raws:  make(chan []byte, 3*workers+2),
		quit:  make(chan struct{}),
	}
	decs := make([]*zstd.Decoder, workers)
	for i := range decs {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(r.memLimit())))
		if err != nil {
			for _, d := range decs[:i] {
				d.Close()
			}
			return r.wrap(err)
		}
		decs[i] = d
	}
	r.ahead = a
	a.wg.Add(workers)
	for _, d := range decs {
		go a.decode(d)
	}
	go a.produce(r.br, uint64(r.memLimit()), r.frames, r.off)
	return nil
}

// produce takes frames off br in order and hands them to the workers,
// until the end of the input, an error, a frame too big for memory, or
// quit. It does not touch the Reader: fill owns br again once it has
// received the last result.
func (a *ahead) produce(br *bufio.Reader, limit uint64, frames, off int64) {
	defer close(a.order)
	for {
		var raw []byte
		select {
		case raw = <-a.raws:
		default:
		}
		raw, info, err := readFrame(br, raw[:0], limit)
		var res aheadFrame
		switch {
		case err == io.EOF:
			res.err = io.EOF
		case err == errTooBig:
			res.err, res.head = errTooBig, raw
		case err != nil:
			res.err = fmt.Errorf("frame %d at byte %d: %w", frames+1, off, err)
		}
		if res.err != nil {
			res.frames, res.off = frames, off
			out := make(chan aheadFrame, 1)
			out <- res
			select {
			case a.order <- out:
			case <-a.quit:
			}
			return
		}
		frames++
		at := off
		off += int64(len(raw)) + info.skipped
		if info.skipped > 0 {
			continue
		}
		job := aheadJob{raw: raw, frames: frames, at: at, out: make(chan aheadFrame, 1)}
		select { // order first: a result channel waits in order for its frame
		case a.order <- job.out:
		case <-a.quit:
			return
		}
		select {
		case a.work <- job:
		case <-a.quit:
			return
		}
	}
}

// decode decompresses frames until quit.
func (a *ahead) decode(d *zstd.Decoder) {
	defer a.wg.Done()
	defer d.Close()
	for {
		var job aheadJob
		select {
		case job = <-a.work:
		case <-a.quit:
			return
		}
		var buf []byte
		select {
		case buf = <-a.bufs:
		default:
		}
		buf, err := d.DecodeAll(job.raw, buf[:0])
		res := aheadFrame{buf: buf, frames: job.frames}
		if err != nil {
			res.buf, res.err = nil, fmt.Errorf("frame %d at byte %d: %w", job.frames, job.at, err)
		}
		res.off = job.at + int64(len(job.raw))
		if cap(job.raw) <= 16<<20 {
			select {
			case a.raws <- job.raw:
			default:
			}
		}
		job.out <- res // buffered: never blocks
	}
}

// close stops the producer and the workers and waits for the workers.
// The producer may be blocked reading the source: it ends at its next
// step (closing the file ends a read).
func (a *ahead) close() {
	a.stop.Do(func() {
		close(a.quit)
		a.wg.Wait()
	})
}

// fillAhead is fill with decode-ahead: it appends the next frame's
// decompressed bytes to the unread part of r.buf, or returns the error
// fill would have returned for it. private reports that no record refers
// to r.buf (it may then be reused).
func (r *Reader) fillAhead(private bool) error {
	out, ok := <-r.ahead.order
	if !ok { // the producer stopped after its last result: not reached
		return io.EOF
	}
	res := <-out
	r.frames, r.off = res.frames, res.off
	switch {
	case res.err == errTooBig:
		// The producer has stopped: br is the Reader's again.
		r.ahead.close()
		r.raw = res.head
		return r.startStream()
	case res.err != nil:
		return res.err
	}
	if len(r.buf) == 0 {
		if private {
			r.recycle(r.buf)
		}
		r.buf = res.buf
	} else {
		r.buf = append(r.buf, res.buf...)
		r.recycle(res.buf)
	}
	return nil
}

// recycle gives a decompressed buffer no record refers to back to the
// workers.
func (r *Reader) recycle(buf []byte) {
	if cap(buf) == 0 || cap(buf) > 16<<20 {
		return
	}
	select {
	case r.ahead.bufs <- buf[:0]:
	default:
	}
}

// maxRetired bounds the buffers kept for reuse: beyond, the oldest is left
// to the garbage collector.
const maxRetired = 64

// retiredBuf is a decompressed buffer that records handed out alias.
type retiredBuf struct {
	buf  []byte
	last int64 // number of the last record taken from it
}

// ReleaseShared tells the Reader that the caller no longer refers to the
// slices of the records NextShared (or NextClassified) returned up to the
// n-th (counted as Records counts). With decode-ahead, the decompressed
// bytes they alias are then reused for frames to come instead of new
// ones: less for the garbage collector to do. Call it from the goroutine
// that reads; calling it with a record still in use lets the Reader write
// over that record.
func (r *Reader) ReleaseShared(n int64) {
	r.tracking = r.ahead != nil
	k := 0
	for ; k < len(r.retired) && r.retired[k].last <= n; k++ {
		r.recycle(r.retired[k].buf)
	}
	if k > 0 {
		m := copy(r.retired, r.retired[k:])
		clear(r.retired[m:])
		r.retired = r.retired[:m]
	}
}

// retire notes that buf, which records handed out alias, is no longer the
// Reader's buffer.
func (r *Reader) retire(buf []byte) {
	if !r.tracking || cap(buf) == 0 {
		return
	}
	if len(r.retired) == maxRetired {
		m := copy(r.retired, r.retired[1:])
		r.retired = r.retired[:m]
	}
	r.retired = append(r.retired, retiredBuf{buf, r.n})
}
