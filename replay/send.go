package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
	"github.com/mcptape/mcptape/transport"
)

// send sends every step in order, each once its dependencies have arrived:
// a step alone, or the members of a recorded batch together as one batch
// (unless WithUnbatch).
func (r *runner) send(ctx context.Context) error {
	var prevLive time.Time
	prevTime := int64(-1) // recorded time of the previous step
	var back *queued      // a step taken while gathering a batch, not in it
	for {
		group, err := r.nextGroup(ctx, &back)
		if err != nil {
			return err
		}
		if len(group) == 0 {
			return nil
		}
		var frames [][]byte
		var sent []queued
		if st := &group[0].st; st.Closes != "" {
			if err := r.closeStream(ctx, st); err != nil {
				return err
			}
			continue
		}
		for k := range group {
			q := &group[k]
			st := &q.st
			ok, err := r.awaitDeps(ctx, st)
			if err != nil {
				return err
			}
			if !ok {
				prevTime = st.Time
				continue
			}
			if len(sent) == 0 {
				if err := r.pace(ctx, st, prevTime, prevLive); err != nil {
					return err
				}
			}
			prevTime = st.Time
			frame, skip, err := r.rewrite(q.i, st)
			if err != nil {
				return fmt.Errorf("step %d (%s): %w", q.i+1, describeStep(st), err)
			}
			if skip != "" {
				r.note(fmt.Sprintf("step %d (%s) not sent: %s", q.i+1, describeStep(st), skip))
				continue
			}
			frames = append(frames, frame)
			sent = append(sent, *q)
		}
		if len(sent) == 0 {
			continue
		}
		frame := frames[0]
		if group[0].st.Batch > 0 && !r.o.unbatch {
			frame = joinBatch(frames)
		}
		r.record(tape.ClientToServer, frame, time.Now(), nil)
		prevLive = time.Now()
		if err := r.dispatch(ctx, sent, frame, prevLive); err != nil {
			return err
		}
	}
}

// nextGroup returns the next step, or, for the first member of a recorded
// batch, the members of that batch (all of them, unless the tape lost
// some); nil once every step was taken. back holds a step taken that
// belongs to the next group.
func (r *runner) nextGroup(ctx context.Context, back **queued) ([]queued, error) {
	take := func() (queued, bool, error) {
		if q := *back; q != nil {
			*back = nil
			return *q, true, nil
		}
		i, st, ok, err := r.nextStep(ctx)
		return queued{i: i, st: st}, ok, err
	}
	first, ok, err := take()
	if err != nil || !ok {
		return nil, err
	}
	group := []queued{first}
	if first.st.Batch == 0 || r.o.unbatch {
		return group, nil
	}
	for len(group) < first.st.BatchLen {
		q, ok, err := take()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if q.st.Batch != first.st.Batch {
			*back = &q
			break
		}
		group = append(group, q)
	}
	return group, nil
}

// joinBatch returns the batch of the given members.
func joinBatch(members [][]byte) []byte {
	n := 2
	for _, m := range members {
		n += len(m) + 1
	}
	out := make([]byte, 0, n)
	out = append(out, '[')
	for i, m := range members {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, m...)
	}
	return append(out, ']')
}

// dispatch sends frame, which carries the steps sent (one, or a batch).
func (r *runner) dispatch(ctx context.Context, sent []queued, frame []byte, now time.Time) error {
	requests, initialize := false, false
	for k := range sent {
		if st := &sent[k].st; st.Kind == jsonrpc.KindRequest {
			requests = true
			initialize = initialize || st.Method == "initialize"
		}
	}
	r.markCancels(ctx, sent)
	if requests && r.async && !initialize {
		r.sendAsync(ctx, sent, frame)
		return nil
	}
	// The requests count as sent before Send returns: the server may
	// answer them, or end the connection (connError then names the one
	// it did not answer), while Send is still returning.
	r.markSent(sent, now, nil)
	// Over HTTP this returns once the POST is answered: a notification or
	// response is acknowledged, initialize answered (its session id
	// known), before anything recorded after it goes.
	// Answers the recorded server took: a refusal's body is the
	// refusal's, which refusedAnswer reports, not a message to compare.
	answers := answersOnly(sent)
	opt := transport.SendOptions{NoEOL: sent[len(sent)-1].st.NoEOL, KeepRefusal: answers && sent[0].st.Refused == 0}
	ex, err := r.sendBounded(ctx, frame, opt)
	if errors.Is(err, errSendTimeout) {
		what := "the server did not read it"
		if r.async {
			what = "not answered"
		}
		return fmt.Errorf("sending step %d (%s): %s within %v", sent[0].i+1, describeStep(&sent[0].st), what, r.o.timeout)
	}
	if err != nil && !r.refusedAsRecorded(sent, ex, err) && !(answers && r.refusedAnswer(describeSent(sent), err)) {
		return fmt.Errorf("sending step %d (%s): %w", sent[0].i+1, describeStep(&sent[0].st), err)
	}
	r.mu.Lock()
	r.rep.Sent += len(sent)
	r.lastSentIdx, r.lastSentAt = sent[len(sent)-1].i, now
	r.mu.Unlock()
	for k := range sent {
		r.afterSend(&sent[k].st, ex)
	}
	return nil
}

// refusedAsRecorded reports whether err, the error of sending the steps
// sent in exchange ex, is an HTTP error status the recorded server
// refused their POST with too (Step.Refused): the replay goes on, the
// answer in the body, if any, being compared as the recorded one is, and
// a note says so.
func (r *runner) refusedAsRecorded(sent []queued, ex *transport.Exchange, err error) bool {
	var se *transport.StatusError
	if ex == nil || !errors.As(err, &se) || se.Status != sent[0].st.Refused {
		return false
	}
	r.note(fmt.Sprintf("step %d (%s): HTTP %d, as recorded", sent[0].i+1, describeStep(&sent[0].st), se.Status))
	return true
}

// refusedAnswer reports whether err, the error of sending the client's
// answers to server requests (what names them), is an HTTP error status:
// the live server refused them where the recorded one took them. That is
// a difference in the server's behaviour, not a failure of the replay: a
// problem of kind "refused" (SessionReport.Refused) says so and the
// replay goes on, the server's later answers compared as usual. mu is not
// held.
func (r *runner) refusedAnswer(what string, err error) bool {
	var se *transport.StatusError
	if !errors.As(err, &se) {
		return false
	}
	why := fmt.Sprintf("%s: the live server refused it with HTTP %d %s", what, se.Status, http.StatusText(se.Status))
	if body := bytes.TrimSpace(se.Body); len(body) > 0 {
		why += ": " + preview(body)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rep.Refused++
	r.rep.Problems = append(r.rep.Problems, Problem{Kind: "refused", What: why})
	return true
}

// answersOnly reports whether sent holds nothing but answers to server
// requests.
func answersOnly(sent []queued) bool {
	for k := range sent {
		if kind := sent[k].st.Kind; kind != jsonrpc.KindResponse && kind != jsonrpc.KindError {
			return false
		}
	}
	return len(sent) > 0
}

// describeSent names the steps sent: the first step, and the size of a
// batch.
func describeSent(sent []queued) string {
	what := fmt.Sprintf("step %d (%s)", sent[0].i+1, describeStep(&sent[0].st))
	if len(sent) > 1 {
		what += fmt.Sprintf(" in a batch of %d", len(sent))
	}
	return what
}

// errSendTimeout is sendBounded's error for a frame not written, or a
// POST not answered, in time.
var errSendTimeout = errors.New("send timed out")

// sendBounded sends frame, giving up after the timeout with
// errSendTimeout: over stdio and WebSocket, where Send returns once the
// frame is written, when the server does not read it; over HTTP, where
// Send waits for the answer's headers, when the server holds them back.
// An HTTP exchange, once answered, lives on until it ends. opt are the
// options of the Send (NoEOL: see Step.NoEOL), its Deadline set here.
func (r *runner) sendBounded(ctx context.Context, frame []byte, opt transport.SendOptions) (*transport.Exchange, error) {
	if !r.async {
		opt.Deadline = time.Now().Add(r.o.timeout)
		ex, err := r.conn.Send(ctx, frame, opt)
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return nil, errSendTimeout
		}
		return ex, err
	}
	sctx, cancel := context.WithCancelCause(ctx)
	timer := time.AfterFunc(r.o.timeout, func() { cancel(errSendTimeout) })
	ex, err := r.conn.Send(sctx, frame, opt)
	timer.Stop()
	if err != nil {
		cancel(nil)
		if cause := context.Cause(sctx); errors.Is(cause, errSendTimeout) && ctx.Err() == nil {
			return nil, cause
		}
		return ex, err
	}
	if ex == nil {
		cancel(nil)
	} else {
		ex.AfterDone(func() { cancel(nil) })
	}
	return ex, nil
}

// markCancels marks the requests that the notifications/cancelled among
// sent (a lone cancel, or members of a batch) name as cancelled live,
// before the frame goes: the answer may cross the cancel. A cancel naming
// a request sent in an earlier frame on its own goroutine waits until
// that request has landed (awaitLaunched); one naming a request of the
// same batch needs not: it goes in the same POST, after it.
func (r *runner) markCancels(ctx context.Context, sent []queued) {
	for k := range sent {
		st := &sent[k].st
		if st.Method != "notifications/cancelled" || st.Kind != jsonrpc.KindNotification {
			continue
		}
		r.mu.Lock()
		target := r.cancelTarget(st)
		r.cancelled[target] = true
		r.notify()
		r.mu.Unlock()
		if !slices.ContainsFunc(sent, func(q queued) bool { return q.st.Kind == jsonrpc.KindRequest && q.st.IDKey == target }) {
			r.awaitLaunched(ctx, target)
		}
	}
}

// markSent notes the requests among sent as sent at now, launched by l
// when it is not nil (sendAsync).
func (r *runner) markSent(sent []queued, now time.Time, l *launch) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k := range sent {
		if st := &sent[k].st; st.Kind == jsonrpc.KindRequest {
			r.sentAt[st.IDKey] = now
			if l != nil {
				r.launched[st.IDKey] = l
			}
		}
	}
}

// sendAsync sends a frame holding requests on its own goroutine: over
// HTTP, Send returns only once the response headers arrived, which some
// servers delay until the answer is ready, while the client went on
// sending (a cancel, other requests). initialize is not sent this way:
// its answer carries the session id every later message needs.
func (r *runner) sendAsync(ctx context.Context, sent []queued, frame []byte) {
	sctx, abort := context.WithCancel(ctx)
	l := &launch{Landing: transport.NewLanding(), abort: abort}
	now := time.Now()
	r.markSent(sent, now, l)
	r.mu.Lock()
	r.rep.Sent += len(sent) // taken back if the POST fails: its answer may come only as the replay ends
	r.lastSentIdx, r.lastSentAt = sent[len(sent)-1].i, now
	r.mu.Unlock()
	r.bg.Add(1)
	go func() {
		defer r.bg.Done()
		defer l.Sent() // once the exchange is known (below)
		ex, err := r.conn.Send(sctx, frame, transport.SendOptions{Written: l.Wrote})
		if err != nil && r.refusedAsRecorded(sent, ex, err) {
			err = nil
		}
		// Ended by closeStream giving the POST up (closeNow), or by the
		// replay's end: not a failure.
		given := sctx.Err() != nil
		if err != nil || ex == nil {
			abort()
		} else {
			ex.AfterDone(abort)
			r.watchBroken(ctx, ex, sent)
		}
		if err == nil {
			for k := range sent {
				if st := &sent[k].st; st.Kind != jsonrpc.KindRequest {
					r.afterSend(st, ex)
				}
			}
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if err != nil {
			if !r.closing && !given {
				r.rep.Sent -= len(sent)
				r.fail(fmt.Errorf("sending step %d (%s): %w", sent[0].i+1, describeStep(&sent[0].st), err))
			}
			return
		}
		if ex == nil || ex.ID == 0 {
			return
		}
		first := true
		for k := range sent {
			st := &sent[k].st
			if st.Kind != jsonrpc.KindRequest {
				continue
			}
			if first {
				r.exchReq[ex.ID] = st.IDKey
				first = false
			}
			r.exchanges[st.IDKey] = ex
		}
	}()
}

// requestID returns the live id of a request step, and whether it differs
// from the recorded one, and notes the use. Ids are one id by value
// (jsonrpc.ID.Key: 1, 1.0 and 1e0 are one): a recorded id used again,
// however spelled, is sent under the live id of its first use, as the
// recorded client did. Ids that identify a request get a fresh live id:
// strings and integers, whatever their spelling, a live integer spelled
// as the recorded one was (spellAs: 1.0 becomes 7.0). A null id, an
// object, an array or a fraction is sent as recorded, always. mu is held.
func (r *runner) requestID(st *Step, id jsonrpc.ID) ([]byte, bool) {
	base := id.Key()
	r.openUses[base] = append(r.openUses[base], st.IDKey)
	live, ok := r.ids.live[base]
	if !freshKind(id) {
		raw := bytes.Clone(id.Raw)
		if !ok {
			r.ids.live[base] = raw
		}
		r.ids.rec[base] = base // the live answer's id: the same value
		return raw, false
	}
	if !ok || !freshKind(jsonrpc.ID{Raw: live, Type: id.Type}) {
		live = r.ids.assign(base, id.Type)
	}
	live = spellAs(live, id)
	r.ids.live[base] = live // as sent last (see prune)
	return live, !bytes.Equal(live, id.Raw)
}

// freshKind reports whether id is of a kind replay gives a fresh live id:
// a string or a number of integral value (jsonrpc.ID.Integer).
func freshKind(id jsonrpc.ID) bool {
	return id.Type == jsonrpc.IDString || id.Integer()
}

// spellAs returns live, a fresh integer or string id (as spellAs made it
// for an earlier use), spelled as the recorded id rec: an integer recorded
// with a fraction (1.0) or an exponent (1e0) gets one too (7.0, 7e0), one
// recorded plain is plain (7), so that the live server sees the value the
// recorded one saw under the same kind of spelling.
func spellAs(live []byte, rec jsonrpc.ID) []byte {
	if rec.Type != jsonrpc.IDNumber || len(live) == 0 || live[0] == '"' {
		return live
	}
	if i := bytes.IndexAny(live, ".e"); i >= 0 {
		live = live[:i]
	}
	switch {
	case bytes.IndexByte(rec.Raw, '.') >= 0:
		return append(bytes.Clone(live), ".0"...)
	case bytes.ContainsAny(rec.Raw, "eE"):
		return append(bytes.Clone(live), "e0"...)
	}
	return live
}

// takeUse returns the key of the oldest use of the recorded id base that
// is still waiting for its live answer: answers to an id used again are
// paired in order. When none is waiting (a server that answers a request
// twice), it is the key of the n-th answer to base, as the recording keys
// its own (loading: the n-th recorded answer to an id is useKey(id, n)).
// mu is held.
func (r *runner) takeUse(base string) string {
	r.answers[base]++
	uses := r.openUses[base]
	if len(uses) == 0 {
		return useKey(base, r.answers[base])
	}
	if len(uses) == 1 {
		delete(r.openUses, base)
	} else {
		r.openUses[base] = uses[1:]
	}
	return uses[0]
}

// cancelTarget returns the key of the use of the request a cancel step
// names: its latest use still waiting for an answer, else its id key. mu
// is held.
func (r *runner) cancelTarget(st *Step) string {
	base := jsonrpc.Classify(st.Frame).CancelTarget.Key()
	if uses := r.openUses[base]; len(uses) > 0 {
		return uses[len(uses)-1]
	}
	return base
}

// closeStream closes the HTTP response stream of the request st.Closes
// names, as the recorded client did: once st.CloseAfter live server
// messages came on it (what the recording holds from that stream; later
// ones are dropped), or the timeout passed. A request sent on its own
// goroutine whose answer's headers have not come yet (a server may hold
// them back until its first event) is waited for when the recorded client
// saw messages on the stream, which come after the headers; when it saw
// none, it closed the stream before the headers came: its POST is given
// up (closeNow). Over stdio there is no stream to close.
func (r *runner) closeStream(ctx context.Context, st *Step) error {
	key := st.Closes
	r.awaitLaunched(ctx, key)
	r.mu.Lock()
	r.rep.Sent++
	ex, l := r.exchanges[key], r.launched[key]
	r.mu.Unlock()
	if ex == nil && l != nil && st.CloseAfter > 0 {
		if err := r.awaitReturned(ctx, l); err != nil {
			return err
		}
	}
	r.mu.Lock()
	ex = r.exchanges[key]
	if ex == nil && (l == nil || returned(l)) { // failed, or no stream of its own
		r.addNote(fmt.Sprintf("the recorded client closed the stream of %s: no live stream to close", r.requestDesc(key)))
		r.mu.Unlock()
		return nil
	}
	r.closeAt[key] = st.CloseAfter
	if ex == nil || r.exchMsgs[ex.ID] >= st.CloseAfter {
		r.closeNow(key, ex)
	}
	r.mu.Unlock()
	if _, err := r.waitUntil(ctx, time.Now().Add(r.o.timeout), func() bool { return r.closed[key] }); err != nil {
		return err
	}
	r.mu.Lock()
	r.closeNow(key, ex) // on time out
	r.mu.Unlock()
	return nil
}

// closeNow closes the live stream ex of the recorded request key; with ex
// nil, its answer's headers have not come: the POST, sent on its own
// goroutine, is given up, as a client closing the stream then does. What
// the server would have sent on it is not in the recording either. mu is
// held.
func (r *runner) closeNow(key string, ex *transport.Exchange) {
	if r.closed[key] {
		return
	}
	r.closed[key] = true
	delete(r.closeAt, key)
	switch l := r.launched[key]; {
	case ex != nil:
		ex.CloseStream()
	case l != nil:
		l.abort()
	}
	r.notify()
}

// onClosedStream counts a live message that came on the HTTP exchange and
// reports whether to drop it: it came after the point where the replay
// closes (or closed) that stream, as the recorded client did. mu is held.
func (r *runner) onClosedStream(exchange uint64) bool {
	key, mapped := r.exchReq[exchange]
	if mapped && r.closed[key] {
		return true
	}
	r.exchMsgs[exchange]++
	if !mapped {
		return false
	}
	n, ok := r.closeAt[key]
	switch {
	case !ok || r.exchMsgs[exchange] < n:
		return false
	case r.exchMsgs[exchange] == n:
		r.closeNow(key, r.exchanges[key])
		return false
	}
	r.closeNow(key, r.exchanges[key])
	return true
}
