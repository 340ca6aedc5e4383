package replay

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/mcptape/mcptape/internal/jsondiff"
	"github.com/mcptape/mcptape/transport"
)

// Run replays sessions against the live server reached through dial, each
// session over its own connection, at most the configured concurrency at
// once, and returns the report. Sessions replayed at once may share one
// scope of the server (a stateless server, or one that sends every
// message on every stream): their fresh ids and progress tokens are then
// disjoint, so that a cancel or a progress token names its own session's
// request only (see the package doc, Rewriting). Failures of a session (the server died,
// hung or sent garbage) are in its SessionReport, not in the returned
// error, which is only about bad options or a nil dial. When ctx ends the
// sessions in progress stop and report what they replayed.
func Run(ctx context.Context, sessions []*Session, dial DialFunc, opts ...Option) (*Report, error) {
	o, err := newRunOptions(opts)
	if err != nil {
		return nil, err
	}
	if dial == nil {
		return nil, errors.New("replay: nil dial function")
	}
	paths := o.ignore
	if !o.exactChunks {
		paths = append(slices.Clip(paths), chunkPaths...)
	}
	cmp, err := newComparer(paths)
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	rep := &Report{Sessions: make([]*SessionReport, len(sessions))}
	work := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(o.concurrency, len(sessions)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				space := ownSpace
				if o.concurrency > 1 || sessions[i].StreamPath != "" {
					space = sharedSpace(i, len(sessions))
				}
				rep.Sessions[i] = replaySession(ctx, sessions[i], dial, o, cmp, space)
			}
		}()
	}
	for i := range sessions {
		work <- i
	}
	close(work)
	wg.Wait()
	return rep, nil
}

// replaySession dials and replays one session, numbering its fresh ids
// in space.
func replaySession(ctx context.Context, s *Session, dial DialFunc, o *options, cmp *jsondiff.Comparer, space idSpace) *SessionReport {
	r := newRunner(s, o, cmp, space)
	conn, err := dial(ctx, s)
	if err != nil {
		r.rep.Error = fmt.Sprintf("connecting: %v", err)
		r.finishReport()
		return r.rep
	}
	r.conn = conn
	_, r.async = conn.(*transport.HTTPConn)
	_, ws := conn.(*transport.WSConn)
	r.noLines = r.async || ws
	r.run(ctx)
	return r.rep
}
