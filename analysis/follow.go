package analysis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// Following a tape while mcptape record writes it (show --follow, inspect
// --follow): the file is read as it grows, polled every FollowPoll at its
// end, and each record is yielded as soon as its zstd frame is complete
// (the recorder writes a frame every 100 ms), in file order, which is time
// order for the tapes record writes (Header.TimeOrdered; an older tape is
// read in file order too, tape.WithFileOrder: putting it in order would
// hold records back). Following stops at
// the tape's end record (the recorder's "stats" event, written when it
// closes the tape) or when the context ends (Ctrl-C); a file that holds
// more tapes after that end record (tapes joined with cat) is read to its
// end, without waiting for more.

// FollowPoll is how often a followed tape is polled at its end.
const FollowPoll = 100 * time.Millisecond

// growingFile reads a file that another process appends to: at the end it
// waits for more, until ctx ends or, once grown is set (the writer closed
// its tape), not at all.
type growingFile struct {
	ctx   context.Context
	f     *os.File
	grown bool
}

func (g *growingFile) Read(p []byte) (int, error) {
	for {
		n, err := g.f.Read(p)
		if n > 0 || (err != nil && !errors.Is(err, io.EOF)) || g.grown {
			return n, err
		}
		t := time.NewTimer(FollowPoll)
		select {
		case <-g.ctx.Done():
			t.Stop()
			return 0, io.EOF
		case <-t.C:
		}
	}
}

// follower yields the items of a growing tape, in file order.
type follower struct {
	r       *tape.Reader
	file    *growingFile
	item    Item
	seq     int64
	rec     *tape.Record
	members [][]byte
	member  int
}

// openFollow opens the tape at path to follow it; closing the returned
// function closes the file.
func openFollow(ctx context.Context, path string) (*follower, func() error, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	g := &growingFile{ctx: ctx, f: f}
	r, err := tape.NewReader(g, tape.WithFileOrder())
	if err != nil {
		f.Close()
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("%s: no tape header before the end: %w", path, ctx.Err())
		}
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return &follower{r: r, file: g}, func() error { r.Close(); return f.Close() }, nil
}

// Next returns the next item, io.EOF at the end of the file after an end
// record, or when the context ended.
func (fl *follower) Next() (*Item, error) {
	if fl.rec != nil && fl.member < len(fl.members) {
		m := fl.members[fl.member]
		fl.item = Item{Rec: fl.rec, Seq: fl.seq, Frame: m, Info: jsonrpc.Classify(m), Batch: len(fl.members), Member: fl.member}
		fl.member++
		return &fl.item, nil
	}
	fl.rec = nil
	rec, err := fl.r.Next()
	if err != nil {
		return nil, err
	}
	fl.seq++
	fl.item = Item{Rec: rec, Seq: fl.seq, Member: -1}
	if rec.Type == tape.TypeEvent && rec.Event == tape.EventStats {
		fl.file.grown = true // the end record: what follows is there already, or nothing
	}
	if rec.Type != tape.TypeMessage {
		return &fl.item, nil
	}
	fl.item.Frame = rec.Frame
	fl.item.Info = jsonrpc.Classify(rec.Frame)
	if fl.item.Info.Kind == jsonrpc.KindBatch {
		fl.members, _ = jsonrpc.AppendSplit(fl.members[:0], rec.Frame)
		fl.item.Batch = len(fl.members)
		fl.rec, fl.member = rec, 0
	}
	return &fl.item, nil
}

// Records returns the records yielded so far.
func (fl *follower) Records() int64 { return fl.seq }

// Warning returns the reader's warning: a tape cut before its end record.
func (fl *follower) Warning() error { return fl.r.Warning() }

// FollowShow writes the timeline of the tape at path as record writes it,
// with Show's options; a problem the analysis finds is written as a line
// of its own ("!! rule: detail") right after the message that caused it.
// It returns at the tape's end record or when ctx ends.
func FollowShow(ctx context.Context, path string, w io.Writer, opts ...ShowOption) (ShowStats, error) {
	fl, closeFn, err := openFollow(ctx, path)
	if err != nil {
		return ShowStats{}, err
	}
	defer closeFn()
	st, err := showItems(fl, fl.r.Header(), w, true, opts...)
	if ctx.Err() != nil {
		st.Warning = nil // stopped by the user, not cut
	}
	return st, err
}

// FollowInspect inspects the tape at path as record writes it, writing
// each problem as it happens to w ("+0.120s [session] rule: detail"), and
// returns the report of everything read at the tape's end record or when
// ctx ends.
func FollowInspect(ctx context.Context, path string, w io.Writer, opts ...Option) (*Report, error) {
	fl, closeFn, err := openFollow(ctx, path)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	in, err := NewInspector(fl.r.Header(), opts...)
	if err != nil {
		return nil, err
	}
	in.live = w
	for {
		it, err := fl.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		in.Add(it)
		if in.liveErr != nil {
			return nil, fmt.Errorf("analysis: follow: %w", in.liveErr)
		}
	}
	warning := fl.Warning()
	if ctx.Err() != nil {
		warning = nil // stopped by the user, not cut
	}
	rep := in.Finish(warning)
	rep.File = path
	return rep, nil
}
