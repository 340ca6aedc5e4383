package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
	"github.com/mcptape/mcptape/transport"
)

// receive takes every live frame until the connection ends.
func (r *runner) receive(ctx context.Context) {
	for {
		in, err := r.conn.Recv(ctx)
		if err != nil {
			r.mu.Lock()
			if !r.closing && ctx.Err() == nil && !errors.Is(err, transport.ErrClosed) {
				r.fail(r.connError(err))
			}
			r.mu.Unlock()
			return
		}
		r.record(tape.ServerToClient, in.Frame, in.Time, &transport.Exchange{ID: in.Exchange})
		if in.Truncated {
			r.mu.Lock()
			r.fail(fmt.Errorf("the server sent a frame longer than the maximum frame size (%d bytes kept)", len(in.Frame)))
			r.mu.Unlock()
			continue
		}
		if info := jsonrpc.Classify(in.Frame); info.Kind != jsonrpc.KindBatch {
			r.take(ctx, in.Frame, &info, in.Exchange)
			continue
		}
		members, err := jsonrpc.Split(in.Frame)
		if err != nil { // not reached: Classify said it is an array
			r.mu.Lock()
			r.fail(fmt.Errorf("the server sent a batch that cannot be split: %w", err))
			r.mu.Unlock()
			continue
		}
		for _, m := range members {
			info := jsonrpc.Classify(m)
			r.take(ctx, m, &info, in.Exchange)
		}
	}
}

// connError describes the end of the connection by the server, naming the
// first step whose answer was still awaited. mu is held.
func (r *runner) connError(err error) error {
	waiting := ""
	for _, g := range r.pendingServer(jsonrpc.KindResponse) {
		key := r.srv[g].IDKey
		if d, ok := r.reqStep[key]; ok && !r.cancelled[key] {
			if _, sent := r.sentAt[key]; sent {
				waiting = fmt.Sprintf(" before answering step %d (%s)", d.i+1, describeRequest(d.method, d.name, key))
				break
			}
		}
	}
	sc, ok := r.conn.(interface {
		Exited() <-chan struct{}
		ExitErr() error
	})
	if ok && errors.Is(err, transport.ErrServerClosed) {
		select {
		case <-sc.Exited():
			status := "exit status 0"
			if ee := sc.ExitErr(); ee != nil {
				status = ee.Error()
			}
			return fmt.Errorf("the server closed the connection (%s)%s", status, waiting)
		default:
		}
	}
	return fmt.Errorf("receiving%s: %w", waiting, err)
}

// take handles one live message.
func (r *runner) take(ctx context.Context, frame []byte, info *jsonrpc.Info, exchange uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if exchange != 0 && r.onClosedStream(exchange) {
		return // after the point where the recorded client closed the stream: not in the recording
	}
	switch info.Kind {
	case jsonrpc.KindResponse, jsonrpc.KindError:
		r.takeResponse(frame, info)
	case jsonrpc.KindRequest:
		r.takeRequest(ctx, frame, info, exchange)
	case jsonrpc.KindNotification:
		r.notify() // the wait for the last server messages counts them
		if info.ProgressToken.Type != jsonrpc.IDAbsent {
			if owner := r.tokenOwner[r.tokens.rec[info.ProgressToken.Key()]]; owner != "" {
				r.liveProgress[[2]string{owner, info.Method}]++ // judged at the end
				return
			}
		}
		r.liveNotif[info.Method]++
	default:
		if r.liveInvalid < r.s.Invalid {
			r.liveInvalid++ // the recorded server sent as many: not compared
			return
		}
		if info.Violations.Has(jsonrpc.ViolationInvalidJSON) {
			r.fail(fmt.Errorf("the server sent a frame that is not JSON: %s", preview(frame)))
			return
		}
		r.fail(fmt.Errorf("the server sent a frame that is not a JSON-RPC message (%s): %s", info.Violations, preview(frame)))
	}
}

// takeResponse pairs a live response with its recorded twin. mu is held.
func (r *runner) takeResponse(frame []byte, info *jsonrpc.Info) {
	done, frame := r.takeLivePart(frame, info)
	if done {
		return // a part of a streamed answer: the request stays in flight
	}
	var recKey string
	if t := info.ID.Type; t == jsonrpc.IDNull || t == jsonrpc.IDAbsent {
		// Paired in order with the recorded answers without an id.
		r.unaddressed++
		recKey = unaddressedKey(r.unaddressed)
	} else {
		base, ok := r.ids.rec[info.ID.Key()]
		if !ok {
			if r.takeUnsolicited(frame, info) {
				return
			}
			r.rep.Extra++
			r.rep.Problems = append(r.rep.Problems, Problem{Kind: "extra", What: "response to unknown id " + info.ID.String()})
			return
		}
		recKey = r.takeUse(base)
	}
	idx, ok := r.respIdx[recKey]
	if !ok {
		if r.cancelled[recKey] {
			return // a response crossing the cancel is allowed
		}
		if !r.loaded { // its twin may not be admitted yet
			r.early[recKey] = append(r.early[recKey], bytes.Clone(frame))
			return
		}
		r.unexpectedResponse(recKey, info)
		return
	}
	r.pairResponse(recKey, idx, frame, info)
}

// takeUnsolicited pairs a live response to an id the replay did not send
// with the recorded response to the same id that answered no request
// (ServerMsg.Unsolicited), the n-th with the n-th, and reports whether it
// did. mu is held.
func (r *runner) takeUnsolicited(frame []byte, info *jsonrpc.Info) bool {
	base := info.ID.Key()
	recKey := useKey(base, r.unsolicited[base]+1)
	idx, ok := r.respIdx[recKey]
	if !ok || !r.srv[idx].Unsolicited {
		return false
	}
	r.unsolicited[base]++
	r.pairResponse(recKey, idx, frame, info)
	return true
}

// unexpectedResponse counts a live response to recKey (info: its
// classification) without a recorded twin: the answer to a request
// recorded without an answer (unanswered.go), extra, or after the cut of
// a cut session. mu is held.
func (r *runner) unexpectedResponse(recKey string, info *jsonrpc.Info) {
	if r.takeNoAnswer(recKey, info) {
		return
	}
	if r.s.Cut {
		r.cutMessages++ // its recorded answer was after the cut
		return
	}
	r.rep.Extra++
	r.rep.Problems = append(r.rep.Problems, Problem{Kind: "extra", What: "response to " + r.requestDesc(recKey) + " (none in the recording)"})
}

// pairResponse takes the live response frame to the recorded request
// recKey, whose recorded response is Server[idx], and compares them (at
// the end when the recording cancels the request). mu is held.
func (r *runner) pairResponse(recKey string, idx int, frame []byte, info *jsonrpc.Info) {
	m := r.srv[idx]
	r.recordedStream(m)
	delete(r.respIdx, recKey)
	m.arrived, m.arrivedAt = true, time.Now()
	r.maxArrivedResp = max(r.maxArrivedResp, idx)
	r.notify()
	// A failed initialize fails the session, after it is counted (as a
	// difference) like any other answer.
	failed := r.initializeFailed(recKey, m, info, frame)
	live := append([]byte(nil), frame...)
	r.learn(m, live)
	p := pair{srv: idx, rec: m.Frame, recKey: recKey, live: r.learnInputKeys(idx, m, live)}
	if r.recCancelled[recKey] {
		r.pairs = append(r.pairs, p) // whether it is compared depends on the cancel
	} else {
		r.compare(p)
	}
	r.retire(idx, recKey, string(r.ids.live[baseKey(recKey)]))
	if failed != nil {
		r.fail(failed)
	}
}

// initializeFailed returns why the session cannot go on when frame, the
// live answer to the recorded request recKey, is an error answering an
// initialize the recording saw succeed: every later step would fail for
// that one reason. mu is held.
func (r *runner) initializeFailed(recKey string, m *srvState, info *jsonrpc.Info, frame []byte) error {
	d, ok := r.reqStep[recKey]
	if !ok || d.method != "initialize" || info.Kind != jsonrpc.KindError || m.Kind == jsonrpc.KindError {
		return nil
	}
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal(frame, &e) // a frame classified as an error
	return fmt.Errorf("step %d (%s) failed: the server answered error %d: %s", d.i+1, describeRequest(d.method, d.name, recKey), info.ErrorCode, preview([]byte(e.Error.Message)))
}

// learn maps the opaque values of a recorded response to those of its live
// twin, when the recorded response holds any. mu is held.
func (r *runner) learn(m *srvState, live []byte) {
	rec := m.Frame
	if !containsAny(rec, opaqueMarkers) {
		return
	}
	rv, err1 := decodeJSON(rec)
	lv, err2 := decodeJSON(live)
	if err1 == nil && err2 == nil {
		learnOpaque(rv, lv, r.opaque)
	}
}

// learnInputKeys maps, when the recorded response asks for input (MRTR),
// its inputRequests keys to those of the live twin, for the retry, and
// reports keys left without a counterpart. It returns the live frame to
// compare: with the live keys put back to the recorded ones. mu is held.
func (r *runner) learnInputKeys(idx int, m *srvState, live []byte) []byte {
	recKeys, ok := inputRequestKeys(m.Frame)
	if !ok {
		return live
	}
	liveKeys, ok := inputRequestKeys(live)
	if !ok {
		return live // the live answer does not ask: the comparison shows it
	}
	names, recLeft, liveLeft := mapInputKeys(recKeys, liveKeys)
	r.inputNames[idx] = names
	if what := describeInputKeys(recLeft, liveLeft); what != "" {
		r.rep.Problems = append(r.rep.Problems, Problem{Kind: "input", What: "answer to " + r.requestDesc(m.IDKey) + ": " + what})
	}
	cmp, _, err := renameKeys(live, []string{"result", "inputRequests"}, invert(names))
	if err != nil { // not reached: inputRequestKeys decoded it
		return live
	}
	return cmp
}

// takeRequest matches a live server request with its recorded twin, or
// answers it with the fallback. mu is held.
func (r *runner) takeRequest(ctx context.Context, frame []byte, info *jsonrpc.Info, exchange uint64) {
	// Match by order within the related request when both the recording
	// and the live exchange tell it, else by order in the session: the
	// first recorded request of the method whose twin has not arrived.
	idx := -1
	if related, ok := r.exchReq[exchange]; ok && exchange != 0 && r.s.hasRelated {
		k := [2]string{related, info.Method}
		idx, r.twins[k] = r.firstPending(r.twins[k])
	} else {
		idx, r.sessTwins[info.Method] = r.firstPending(r.sessTwins[info.Method])
	}
	liveID := append([]byte(nil), info.ID.Raw...)
	if idx >= 0 {
		m := r.srv[idx]
		m.arrived, m.arrivedAt, m.liveID = true, time.Now(), liveID
		r.rep.ServerRequests++
		r.notify()
		// The sender answers it at the recorded place, if the recorded
		// client answered it at all (a notification that carries an id
		// was not): only what the recording answered is answered.
		if m.Answer < 0 && r.loaded {
			r.retire(idx, "", "")
		}
		return
	}
	answer, what := fallbackAnswer(info.Method, liveID)
	if r.s.Cut {
		r.cutMessages++ // its recorded twin, if any, was after the cut
	} else {
		r.rep.Extra++
		r.rep.Problems = append(r.rep.Problems, Problem{Kind: "fallback",
			What: fmt.Sprintf("server request %s (live id %s) has no recorded answer; answered %s", info.Method, liveID, what)})
	}
	r.bg.Add(1)
	r.fallbacks++
	go func() {
		defer r.bg.Done()
		defer func() {
			r.mu.Lock()
			r.fallbacks--
			r.notify()
			r.mu.Unlock()
		}()
		r.record(tape.ClientToServer, answer, time.Now(), nil)
		_, err := r.conn.Send(ctx, answer, transport.SendOptions{KeepRefusal: true}) // the refusal is reported as such
		if err != nil && ctx.Err() == nil && !r.refusedAnswer(fmt.Sprintf("the fallback answer to server request %s (live id %s)", info.Method, liveID), err) {
			r.mu.Lock()
			if !r.closing {
				r.fail(fmt.Errorf("answering server request %s: %w", info.Method, err))
			}
			r.mu.Unlock()
		}
	}()
}

// afterCut reports whether, in a session the tape's damage cut, the
// recorded request with id key owner has no recorded answer: what the
// server sent for it is after the cut. mu is held.
func (r *runner) afterCut(owner string) bool {
	return r.s.Cut && owner != "" && !r.recAnswered[owner]
}

// firstPending returns the first server request of list whose twin has
// not arrived (-1 if none), and the list without those before it, which
// have. mu is held.
func (r *runner) firstPending(list []int) (int, []int) {
	for i, c := range list {
		if m := r.srv[c]; m != nil && !m.arrived {
			return c, list[i:]
		}
	}
	return -1, nil
}

// requestDesc names a recorded request by its id key. mu is held.
func (r *runner) requestDesc(recKey string) string {
	if d, ok := r.reqStep[recKey]; ok {
		return describeRequest(d.method, d.name, recKey)
	}
	if strings.HasPrefix(recKey, "#") {
		return "a frame (answer " + recKey + " without an id)"
	}
	if base := baseKey(recKey); base != recKey {
		return fmt.Sprintf("request %s (use %s)", base, recKey[len(base)+1:])
	}
	return "request " + recKey
}

func containsAny(b []byte, markers [][]byte) bool {
	for _, m := range markers {
		if bytes.Contains(b, m) {
			return true
		}
	}
	return false
}

// preview returns the start of a frame as printable text for messages.
func preview(b []byte) string {
	const n = 80
	s := b
	if len(s) > n {
		s = s[:n]
	}
	out := make([]rune, 0, len(s))
	for len(s) > 0 {
		c, size := utf8.DecodeRune(s)
		s = s[size:]
		if c < 0x20 || c == 0x7f {
			c = ' '
		}
		out = append(out, c)
	}
	q := fmt.Sprintf("%q", string(out))
	if len(b) > n {
		q += "..."
	}
	return q
}
