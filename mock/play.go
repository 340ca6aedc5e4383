package mock

import (
	"context"
	"math"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/replay"
)

// clock paces a playback: a recorded time maps to the live moment that is
// as far (divided by the speed) from the live start as it was from the
// recorded base.
type clock struct {
	speed float64 // 0: no waiting
	start time.Time
	base  int64
}

func newClock(speed float64, base int64) *clock {
	return &clock{speed: speed, start: time.Now(), base: base}
}

// wait waits until the live moment of the recorded time at. It returns
// false when ctx ends first, or stop closes (nil: never) before that
// moment: a moment already past is kept whatever stop says.
func (k *clock) wait(ctx context.Context, at int64, extra time.Duration, stop <-chan struct{}) bool {
	var d time.Duration
	if k.speed > 0 {
		// saturated: a huge recorded delay at a low speed waits for ever
		g, since := replay.ScaleGap(at-k.base, k.speed), time.Since(k.start)
		if g < math.MinInt64+since {
			g = math.MinInt64 + since
		}
		d = g - since
	}
	if d > math.MaxInt64-extra { // extra is never negative
		d = math.MaxInt64
	} else {
		d += extra
	}
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-stop:
	}
	return false
}

// rebase makes the recorded time at the live now (after an answer from
// the client, whose delay was the client's).
func (k *clock) rebase(at int64) {
	k.start, k.base = time.Now(), at
}

// play sends what the server said for the recorded request e, then its
// answer under the live id, then (in the background) what came after it.
func (c *Conn) play(ctx context.Context, e *entry, liveID, token []byte, f fault, reply Stream) {
	k := newClock(c.m.o.speed, e.at)
	if f.drop {
		if c.streams {
			// Over Streamable HTTP, like a server that lost the request
			// while handling it: its POST stream ends, with nothing on
			// it, when the answer would have been sent.
			k.wait(ctx, e.answerAt(), f.delay, nil)
			return
		}
		c.waitClient(ctx) // never answered: the client gives up or cancels
		return
	}
	if !f.fail {
		for i := range e.script {
			if e.cancelAt != 0 && e.script[i].at >= e.cancelAt {
				break
			}
			if !c.playItem(ctx, k, &e.script[i], liveID, token, reply) {
				return
			}
		}
		if e.cancelAt != 0 {
			// The recorded client cancelled here: like the recorded
			// server, go no further until the live client does.
			c.waitClient(ctx)
			return
		}
	}
	if e.resp == nil && !f.fail {
		if !c.streams {
			c.waitClient(ctx) // the recorded server never answered either
		}
		return
	}
	var answer []byte
	if !k.wait(ctx, e.answerAt(), f.delay, nil) {
		return
	}
	if f.fail {
		answer = errorFrame(liveID, codeInternal, "mcptape mock: injected fault (--error-rate)")
	} else {
		var err error
		if answer, err = jsonrpc.RewriteID(e.resp.frame, liveID); err != nil {
			answer = errorFrame(liveID, codeInternal, "mcptape mock: the recorded answer cannot carry the live id: "+err.Error())
		}
	}
	if !c.m.claim() {
		return
	}
	sent := c.send(ctx, reply, answer)
	c.m.answered(sent)
	if !sent {
		return
	}
	if len(e.tail) == 0 {
		return
	}
	c.tails.Add(1)
	go func() {
		defer c.tails.Done()
		// The tail outlives the request (its POST stream may end), not
		// the connection (Close), nor the client's input: once that has
		// ended, what was not due yet is not sent.
		ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		defer cancel()
		defer context.AfterFunc(c.life, cancel)()
		for i := range e.tail {
			if !k.wait(ctx, e.tail[i].at, 0, c.gone) || !c.playItem(ctx, k, &e.tail[i], nil, nil, nil) {
				return
			}
		}
	}()
}

// answerAt is the recorded time of e's answer, or of e itself when the
// server never answered.
func (e *entry) answerAt() int64 {
	if e.resp != nil {
		return e.resp.at
	}
	return e.at
}

// playItem sends one recorded server message at its time: on reply, or
// on the session stream when reply is nil (a stream part under liveID).
// It returns false when the playback must stop.
func (c *Conn) playItem(ctx context.Context, k *clock, it *item, liveID, token []byte, reply Stream) bool {
	if !k.wait(ctx, it.at, 0, nil) {
		return false
	}
	s := reply
	if s == nil {
		s = c.sessionStream()
	}
	frame := it.frame
	switch {
	case it.progress:
		if token == nil {
			return true // the live request asked for no progress
		}
		var err error
		if frame, err = jsonrpc.RewriteProgressToken(frame, token); err != nil {
			return true
		}
	case it.part:
		var err error
		if frame, err = jsonrpc.RewriteID(frame, liveID); err != nil {
			return true
		}
	case it.kind == jsonrpc.KindRequest:
		return c.ask(ctx, k, it, s)
	}
	c.send(ctx, s, frame)
	return true
}

// ask sends a server request under a fresh id and waits for the client's
// answer when the recorded client answered.
func (c *Conn) ask(ctx context.Context, k *clock, it *item, s Stream) bool {
	info := jsonrpc.Classify(it.frame)
	id := c.freshID(info.ID.Type)
	frame, err := jsonrpc.RewriteID(it.frame, id)
	if err != nil {
		return true
	}
	key := jsonrpc.Classify(frame).ID.Key()
	ch := make(chan []byte, 1)
	if it.answerAt != 0 {
		c.mu.Lock()
		c.waiting[key] = ch
		c.mu.Unlock()
	}
	if !c.send(ctx, s, frame) || it.answerAt == 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(c.m.o.answerTimeout)
	defer t.Stop()
	select {
	case <-ch:
		k.rebase(it.answerAt)
		return true
	case <-t.C:
		c.m.note("the client did not answer %s within %v", info.Method, c.m.o.answerTimeout)
	case <-ctx.Done():
	case <-c.gone:
	}
	c.mu.Lock()
	delete(c.waiting, key)
	c.mu.Unlock()
	return ctx.Err() == nil
}

// waitClient waits until ctx ends or the client can send nothing more.
func (c *Conn) waitClient(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-c.gone:
	}
}
