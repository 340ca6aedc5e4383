package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// A runner holds only the part of its session in flight. Its steps and
// server messages are admitted (addStep, addServer) by a loader: all at
// once for a session held in memory, or as a streamed session's records
// are read again from the tape, at most maxAhead steps ahead of the
// sender. What is done with is forgotten pruneLag steps later (so that a
// late cancel or pacing can still find it): the memory of a replay is
// bounded by what is in flight, not by the tape.
const (
	maxAhead = 1024
	pruneLag = 1024
)

// srvState is an admitted server response or request, and what the live
// server did about it.
type srvState struct {
	ServerMsg
	arrived   bool
	arrivedAt time.Time
	liveID    []byte // live id of a server request
}

// queued is an admitted step waiting for the sender.
type queued struct {
	i  int
	st Step
}

// retiring is state to forget once the sender is pruneLag steps past at:
// the server message srv (if >= 0) and the request recKey (if not "",
// while it still stands for live id liveKey).
type retiring struct {
	at           int
	srv          int
	recKey, live string
}

// prompt is a recorded MRTR input_required answer, for retryLink.
type prompt struct {
	srv          int
	recKey       string
	method, name string
	state        string
	time         int64
}

// addStep admits step number nSteps. mu is held.
func (r *runner) addStep(st Step) {
	i := r.nSteps
	r.nSteps++
	r.lastStepTime = st.Time
	if st.Kind == jsonrpc.KindRequest {
		r.reqStep[st.IDKey] = stepDesc{i: i, method: st.Method, name: st.Name}
	}
	r.admitNoAnswer(i, &st)
	r.queue.push(queued{i: i, st: st})
	r.notify()
}

// addServer admits server message number nServer. mu is held.
func (r *runner) addServer(m ServerMsg) {
	g := r.nServer
	r.nServer++
	r.lastSrvTime = m.Time
	switch m.Kind {
	case jsonrpc.KindNotification:
		r.countNotification(r.recNotif, r.recProgress, m.Method, jsonrpc.Classify(m.Frame).ProgressToken, r.tokenOwner)
		return
	case jsonrpc.KindResponse, jsonrpc.KindError:
		r.respIdx[m.IDKey] = g
		delete(r.noAnswer, m.IDKey) // its request was admitted first (streamed)
		if r.s.Cut {
			r.recAnswered[m.IDKey] = true
		}
		if bytes.Contains(m.Frame, inputRequestsMarker) {
			if _, ok := inputRequestKeys(m.Frame); ok {
				p := prompt{srv: g, recKey: m.IDKey, state: stringAt(m.Frame, "result", "requestState"), time: m.Time}
				if d, ok := r.reqStep[m.IDKey]; ok {
					p.method, p.name = d.method, d.name
				}
				r.prompts = append(r.prompts, p)
			}
		}
	case jsonrpc.KindRequest:
		k := [2]string{m.Related, m.Method}
		r.twins[k] = append(r.twins[k], g)
		r.sessTwins[m.Method] = append(r.sessTwins[m.Method], g)
	}
	r.srv[g] = &srvState{ServerMsg: m}
	if m.Kind != jsonrpc.KindRequest {
		if early := r.early[m.IDKey]; len(early) > 0 {
			// Its live twin came before the recording was read this far.
			r.early[m.IDKey] = early[1:]
			if len(early) == 1 {
				delete(r.early, m.IDKey)
			}
			info := jsonrpc.Classify(early[0])
			r.pairResponse(m.IDKey, g, early[0], &info)
		}
	}
	r.notify()
}

// setAnswer notes the answer step of an admitted server request. mu is
// held.
func (r *runner) setAnswer(srv, step int) {
	if m := r.srv[srv]; m != nil {
		m.Answer = step
	}
}

// countNotification counts a notification of method into counts, or, when
// it carries the progress token of a known recorded request, into
// progress under that request: whether those count depends on what
// happens to the request (cancelled, cut) and is decided at the end.
func (r *runner) countNotification(counts map[string]int, progress map[[2]string]int, method string, tok jsonrpc.ID, owners map[string]string) {
	if tok.Type != jsonrpc.IDAbsent {
		if owner := owners[tok.Key()]; owner != "" {
			progress[[2]string{owner, method}]++
			return
		}
	}
	counts[method]++
}

// admitAll admits a session held in memory: its server messages first, so
// that every live answer finds its twin.
func (r *runner) admitAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, m := range r.s.Server {
		r.addServer(m)
	}
	for _, st := range r.s.Steps {
		r.addStep(st)
	}
	r.loaded = true
	r.notify()
}

// stream admits a streamed session as its records are read again from the
// tape, keeping at most maxAhead steps ahead of the sender. It ends when
// the records do, or ctx does.
func (r *runner) stream(ctx context.Context) {
	err := r.readSession(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil && ctx.Err() == nil && !r.closing && !errors.Is(err, errStopped) {
		r.fail(fmt.Errorf("reading the tape: %w", err))
	}
	r.loaded = true
	r.notify()
}

func (r *runner) readSession(ctx context.Context) error {
	rd, err := tape.Open(r.s.path)
	if err != nil {
		return err
	}
	defer rd.Close()
	priv := newSession(r.s.ID)
	r.mu.Lock()
	r.tokenOwner, r.recCancelled = priv.tokenOwner, priv.cancelled
	r.mu.Unlock()
	l := newLoading(priv, r, rd.Header())
	for {
		if err := r.awaitRoom(ctx); err != nil {
			return err
		}
		rec, err := rd.Next()
		if errors.Is(err, io.EOF) {
			r.mu.Lock()
			l.finish()
			r.recUnfinished = priv.unfinished
			r.mu.Unlock()
			return nil
		}
		if err != nil {
			return err
		}
		if rec.Session != r.s.ID {
			continue
		}
		r.mu.Lock()
		switch rec.Type {
		case tape.TypeMessage:
			l.add(rec)
		case tape.TypeEvent:
			l.addEvent(rec)
		}
		r.mu.Unlock()
	}
}

// errStopped ends a loader whose session failed or is closing.
var errStopped = errors.New("the session ended")

// awaitRoom waits until fewer than maxAhead admitted steps wait for the
// sender.
func (r *runner) awaitRoom(ctx context.Context) error {
	for {
		r.mu.Lock()
		if r.failure != nil || r.closing {
			r.mu.Unlock()
			return errStopped
		}
		if r.queue.len() < maxAhead {
			r.mu.Unlock()
			return nil
		}
		ch := r.changed
		r.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// nextStep returns the next admitted step, waiting for the loader; ok is
// false once every step was taken.
func (r *runner) nextStep(ctx context.Context) (i int, st Step, ok bool, err error) {
	for {
		r.mu.Lock()
		if r.failure != nil {
			err := r.failure
			r.mu.Unlock()
			return 0, Step{}, false, err
		}
		if r.queue.len() > 0 {
			q := r.queue.pop()
			r.sendIdx = q.i
			r.prune(q.i)
			r.notify() // room for the loader
			r.mu.Unlock()
			return q.i, q.st, true, nil
		}
		if r.loaded {
			r.mu.Unlock()
			return 0, Step{}, false, nil
		}
		ch := r.changed
		r.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return 0, Step{}, false, fmt.Errorf("stopped: %w", ctx.Err())
		}
	}
}

// retire schedules state to forget. mu is held.
func (r *runner) retire(srv int, recKey, live string) {
	r.retiring = append(r.retiring, retiring{at: r.sendIdx, srv: srv, recKey: recKey, live: live})
}

// prune forgets what was retired pruneLag steps before step. mu is held.
func (r *runner) prune(step int) {
	n := 0
	for _, t := range r.retiring {
		if t.at+pruneLag > step {
			break
		}
		n++
		if t.srv >= 0 {
			delete(r.srv, t.srv)
		}
		if t.recKey == "" {
			continue
		}
		if base := baseKey(t.recKey); len(r.openUses[base]) == 0 && string(r.ids.live[base]) == t.live {
			// Not in use again since. The live answer's id maps back
			// under its key (as takeResponse looks it up), which for an
			// id sent as recorded (1.0, an object) is not its raw text.
			delete(r.ids.live, base)
			delete(r.ids.rec, rawIDKey(t.live))
			if r.ids.rec[base] == base {
				delete(r.ids.rec, base) // sent as recorded after an integer of its value had a fresh id
			}
			delete(r.answers, base)
		}
		delete(r.reqStep, t.recKey)
		delete(r.sentAt, t.recKey)
		delete(r.launched, t.recKey)
		if ex := r.exchanges[t.recKey]; ex != nil {
			delete(r.exchReq, ex.ID)
			delete(r.exchMsgs, ex.ID)
			delete(r.exchanges, t.recKey)
		}
	}
	if n > 0 {
		r.retiring = append(r.retiring[:0], r.retiring[n:]...)
	}
}

// pendingServer returns the indexes of the admitted server messages of
// kind k (responses when k is KindResponse) not yet arrived, in order. mu
// is held.
func (r *runner) pendingServer(k jsonrpc.Kind) []int {
	var out []int
	for g, m := range r.srv {
		mk := m.Kind
		if mk == jsonrpc.KindError {
			mk = jsonrpc.KindResponse
		}
		if mk == k && !m.arrived {
			out = append(out, g)
		}
	}
	sort.Ints(out)
	return out
}

// retryLink returns the server index of the recorded input_required answer
// an MRTR retry answers: the one whose requestState it echoes, else the
// latest one recorded before it to a request of the same method and name.
// mu is held.
func (r *runner) retryLink(st *Step) (int, bool) {
	if len(r.prompts) == 0 || !bytes.Contains(st.Frame, inputResponsesMarker) {
		return 0, false
	}
	state := stringAt(st.Frame, "params", "requestState")
	best := -1
	for i := range r.prompts {
		p := &r.prompts[i]
		if p.method == "" {
			if d, ok := r.reqStep[p.recKey]; ok {
				p.method, p.name = d.method, d.name
			}
		}
		if state != "" && p.state == state {
			return p.srv, true
		}
		if p.method == st.Method && p.name == st.Name && p.time <= st.Time {
			best = p.srv
		}
	}
	return best, best >= 0
}
