package tape

// Rotation and retention: a Rotator writes a recording as a series of
// tapes, closing one and starting the next by age or size, and deletes the
// oldest closed ones by age or total size.

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcptape/mcptape/internal/english"
)

// Ext is the file name extension of tapes.
const Ext = ".jsonl.zst"

// segmentTimeLayout is the start time in segment names (UTC).
const segmentTimeLayout = "20060102T150405Z"

// rotateTick is how often a Rotator checks the open tape's age and size.
const rotateTick = 200 * time.Millisecond

// RotateConfig configures a Rotator.
type RotateConfig struct {
	// Base names the series: "DIR/NAME.jsonl.zst" gives the tapes
	// "DIR/NAME-000001-20261201T160700Z.jsonl.zst", numbered on from the
	// highest number already in DIR.
	Base string
	// Every starts the next tape when the open one is this old (0: never).
	Every time.Duration
	// Size starts the next tape once the open one holds this many bytes
	// (compressed, checked every 200 ms; 0: never).
	Size int64
	// Keep deletes closed tapes of the series last written longer ago
	// (0: none).
	Keep time.Duration
	// KeepSize deletes the oldest closed tapes of the series while all of
	// them, the open one included, hold more than this (0: none).
	KeepSize int64
	// Header is the header of every tape; Time and Segment are set per tape.
	Header Header
	// Options apply to every tape's Writer. WithExclusive and WithRecovery
	// are always added.
	Options []Option
	// Warnf hears of write errors, recoveries, deletions and failed
	// rotations (nil: discarded). It may be called concurrently.
	Warnf func(format string, args ...any)
}

// RotatorStats counts what a Rotator did.
type RotatorStats struct {
	Tapes   int64 // tapes started
	Deleted int64 // tapes deleted by retention
	Lost    int64 // records not written (write errors), over all tapes
	Gaps    int64 // gap markers written
	Size    int64 // compressed bytes of the open tape
	Bytes   int64 // uncompressed bytes of the records accepted, over all tapes
	Written int64 // compressed bytes written, over all tapes
	// Reordered, Late and LateMax are the writers' time-order counts
	// (Stats.Reordered, Stats.Late, Stats.LateMax) over all tapes: sums,
	// and the largest shift, as a joined read of the series sums the
	// tapes' stats events.
	Reordered int64
	Late      int64
	LateMax   int64  // nanoseconds
	Path      string // the open tape
}

// Rotator writes records into a series of tapes (see RotateConfig). Write
// is safe for concurrent use and never waits on a rotation's disk I/O: the
// next tape is created, and the previous one closed, on the Rotator's own
// goroutine, and each record goes to exactly one tape. Every tape's Writer
// recovers from write errors (WithRecovery): records are counted lost and
// a gap marker is written once writing works again; a rotation that cannot
// create the next tape keeps the open one and is tried again.
type Rotator struct {
	c      RotateConfig
	dir    string
	name   string // series name: Base without directory and extension
	series string

	rotMu   sync.Mutex   // one rotation at a time; guards seq
	mu      sync.RWMutex // Write holds it shared; a swap holds it alone
	cur     *Writer
	curPath string
	started time.Time
	seq     int
	retired bool // Close has closed cur

	prev           *Writer // the previous tape while it is being closed
	closedSt       Stats   // totals of closed tapes (see addTotals); guarded by mu
	tapes, deleted atomic.Int64
	pruneDue       atomic.Bool
	failing        atomic.Bool // a rotation failed and was reported

	quit      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// NewRotator creates the first tape of a series and starts rotating.
func NewRotator(c RotateConfig) (*Rotator, error) {
	if c.Every < 0 || c.Size < 0 || c.Keep < 0 || c.KeepSize < 0 {
		return nil, errors.New("tape: rotate: durations and sizes must not be negative")
	}
	if c.Warnf == nil {
		c.Warnf = func(string, ...any) {}
	}
	dir, file := filepath.Split(c.Base)
	name := strings.TrimSuffix(file, Ext)
	if name == "" {
		return nil, fmt.Errorf("tape: rotate: %q: no file name to number", c.Base)
	}
	if dir == "" {
		dir = "."
	}
	var id [6]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, fmt.Errorf("tape: rotate: series id: %w", err)
	}
	r := &Rotator{c: c, dir: dir, name: name, series: hex.EncodeToString(id[:]),
		quit: make(chan struct{}), done: make(chan struct{})}
	segs, err := ListSeries(dir, name)
	if err != nil {
		return nil, err
	}
	if n := len(segs); n > 0 {
		r.seq = segs[n-1].Seq
	}
	w, path, start, err := r.create()
	if err != nil {
		return nil, err
	}
	r.cur, r.curPath, r.started = w, path, start
	go r.run()
	return r, nil
}

// Series returns the random id shared by the series' tapes.
func (r *Rotator) Series() string { return r.series }

// Write adds rec to the open tape.
func (r *Rotator) Write(rec *Record) error {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.cur.Write(rec)
}

// Rotate closes the open tape and starts the next one now.
func (r *Rotator) Rotate() error {
	select {
	case <-r.quit:
		return ErrClosed
	default:
	}
	return r.rotate()
}

// Stats returns the Rotator's counters so far.
func (r *Rotator) Stats() RotatorStats {
	r.mu.RLock()
	defer r.mu.RUnlock()
	cur := r.cur.Stats()
	t := r.closedSt
	var open []Stats // tapes not in the totals yet
	if !r.retired {
		open = append(open, cur)
	}
	if r.prev != nil {
		open = append(open, r.prev.Stats())
	}
	for _, st := range open {
		addTotals(&t, st)
	}
	return RotatorStats{Tapes: r.tapes.Load(), Deleted: r.deleted.Load(), Lost: t.Lost, Gaps: t.Gaps,
		Bytes: t.Bytes, Written: t.Compressed, Size: cur.Compressed,
		Reordered: t.Reordered, Late: t.Late, LateMax: t.LateMax, Path: r.curPath}
}

// addTotals adds to t the counts of st, one tape's, that RotatorStats
// totals over the series: sums, and the largest LateMax.
func addTotals(t *Stats, st Stats) {
	t.Lost += st.Lost
	t.Gaps += st.Gaps
	t.Bytes += st.Bytes
	t.Compressed += st.Compressed
	t.Reordered += st.Reordered
	t.Late += st.Late
	t.LateMax = max(t.LateMax, st.LateMax)
}

// Close closes the open tape and stops rotating; it is idempotent.
func (r *Rotator) Close() error {
	r.closeOnce.Do(func() {
		close(r.quit)
		<-r.done
		r.rotMu.Lock() // no Rotate meanwhile
		defer r.rotMu.Unlock()
		r.closeErr = r.retire(r.cur)
	})
	return r.closeErr
}

// create starts the next tape of the series.
func (r *Rotator) create() (*Writer, string, time.Time, error) {
	start := time.Now()
	seq := r.seq + 1
	path := filepath.Join(r.dir, SegmentName(r.name, seq, start))
	h := r.c.Header
	h.Time = start.UnixNano()
	h.Segment = &Segment{Series: r.series, Seq: seq}
	opts := append(append([]Option(nil), r.c.Options...), WithExclusive(), WithRecovery(r.onGap(path)))
	w, err := Create(path, h, opts...)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			r.seq = seq // another process took the number: skip it next time
			return nil, "", start, err
		}
		os.Remove(path) // a file begun on a full disk (O_EXCL made it ours)
		return nil, "", start, err
	}
	r.seq = seq
	r.tapes.Add(1)
	return w, path, start, nil
}

// onGap reports a tape's outages.
func (r *Rotator) onGap(path string) func(Gap) {
	return func(g Gap) {
		if g.Resumed {
			r.c.Warnf("recording to %s works again: %s lost since %s (a gap marker is in the tape)", path, english.Count(g.Lost, "record"), g.From.UTC().Format(time.RFC3339))
			return
		}
		r.c.Warnf("recording failed, forwarding goes on and lost records are counted until writing works again: %v", g.Cause)
		if r.c.KeepSize > 0 || r.c.Keep > 0 {
			r.pruneDue.Store(true)
		}
	}
}

// run rotates by age and size and applies retention.
func (r *Rotator) run() {
	defer close(r.done)
	tick := time.NewTicker(rotateTick)
	defer tick.Stop()
	for {
		select {
		case <-r.quit:
			return
		case <-tick.C:
		}
		r.mu.RLock()
		age, size := time.Since(r.started), r.cur.Stats().Compressed
		r.mu.RUnlock()
		if (r.c.Every > 0 && age >= r.c.Every) || (r.c.Size > 0 && size >= r.c.Size) {
			if err := r.rotate(); err != nil {
				if !r.failing.Swap(true) {
					r.c.Warnf("cannot start the next tape, recording goes on in the open one: %v", err)
				}
			} else if r.failing.Swap(false) {
				r.c.Warnf("rotation works again")
			}
		}
		if r.pruneDue.Swap(false) {
			r.prune()
		}
	}
}

// rotate swaps in the next tape and closes the previous one.
func (r *Rotator) rotate() error {
	r.rotMu.Lock()
	defer r.rotMu.Unlock()
	w, path, start, err := r.create() // Writes go on meanwhile
	if err != nil {
		return err
	}
	r.mu.Lock()
	old := r.cur
	w.continueFrom(old) // the series stays in time order across the switch
	r.cur, r.curPath, r.started, r.prev = w, path, start, old
	r.mu.Unlock()
	if err := r.retire(old); err != nil {
		r.c.Warnf("closing the previous tape: %v", err)
	}
	r.prune()
	return nil
}

// retire closes a tape that no longer takes records and keeps its counts.
func (r *Rotator) retire(w *Writer) error {
	err := w.Close()
	st := w.Stats()
	r.mu.Lock() // the totals grow as the tape leaves Stats' view: they never go back
	defer r.mu.Unlock()
	addTotals(&r.closedSt, st)
	switch w {
	case r.prev:
		r.prev = nil
	case r.cur:
		r.retired = true
	}
	return err
}

// prune applies retention to the series, never to the open tape.
func (r *Rotator) prune() {
	if r.c.Keep == 0 && r.c.KeepSize == 0 {
		return
	}
	segs, err := ListSeries(r.dir, r.name)
	if err != nil {
		r.c.Warnf("retention: %v", err)
		return
	}
	r.mu.RLock()
	open := r.curPath
	r.mu.RUnlock()
	for _, s := range Retain(segs, open, r.c.Keep, r.c.KeepSize, time.Now()) {
		if err := os.Remove(s.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
			r.c.Warnf("retention: %v", err)
			continue
		}
		r.deleted.Add(1)
	}
}
