package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/internal/jsondiff"
	"github.com/mcptape/mcptape/internal/termsafe"
	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
	"github.com/mcptape/mcptape/transport"
)

// runner replays one session. The sender (run) and the receiver (receive)
// share the state below under mu; changed is closed and replaced whenever
// the state changes, to wake the sender.
type runner struct {
	s    *Session
	o    *options
	cmp  *jsondiff.Comparer
	conn transport.Conn
	rep  *SessionReport

	mu      sync.Mutex
	changed chan struct{}
	failure error          // first fatal error; ends the session
	closing bool           // we are closing the connection: its end is not a failure
	bg      sync.WaitGroup // requests and fallback answers being sent
	async   bool           // send requests on their own goroutines (HTTP)
	noLines bool           // messages are not lines (HTTP, WebSocket): a blank line is nothing to send

	ids, tokens *idMap
	opaque      map[string]string         // recorded opaque value -> live
	subs        map[string][]byte         // recorded subscriptions/listen id key -> live raw id
	inputNames  map[int]map[string]string // Server index of an input_required answer -> recorded key -> live key

	// What the loader admitted (window.go): the steps waiting for the
	// sender, and the server responses and requests still of use.
	queue        fifo[queued]
	nSteps       int               // steps admitted
	nServer      int               // server messages admitted
	loaded       bool              // every step was admitted
	sendIdx      int               // index of the step the sender took last
	srv          map[int]*srvState // by Server index
	retiring     []retiring
	prompts      []prompt
	tokenOwner   map[string]string // the session's: progress token key -> recorded request id key
	recCancelled map[string]bool   // the session's: recorded id keys the recording cancels
	recAnswered  map[string]bool   // in a cut session: recorded id keys with a recorded answer

	maxArrivedResp int                            // largest Server index of an arrived response, -1
	respIdx        map[string]int                 // recorded request id key -> Server index of its response, until it arrives
	recUnfinished  []string                       // recorded streamed answers the tape ends in
	liveParts      map[string]*streamParts        // live streamed answers being gathered, by raw live id
	members        []jsonrpc.Member               // scratch for partOf
	early          map[string][][]byte            // recorded request id key -> live answers come before their twin was admitted
	reqStep        map[string]stepDesc            // recorded request id key -> its step
	sentAt         map[string]time.Time           // recorded request id key -> live send time
	cancelled      map[string]bool                // recorded request id keys cancelled live
	exchReq        map[uint64]string              // live HTTP exchange -> recorded request id key
	exchanges      map[string]*transport.Exchange // recorded request id key -> its exchange
	launched       map[string]*launch             // recorded request id key -> its async Send
	twins          map[[2]string][]int            // (related, method) -> Server indexes of server requests
	sessTwins      map[string][]int               // method -> Server indexes of server requests
	recNotif       map[string]int                 // recorded notifications per method
	liveNotif      map[string]int                 // live notifications per method
	recProgress    map[[2]string]int              // (recorded request id key, method) -> its recorded progress notifications
	liveProgress   map[[2]string]int              // the same, live
	pairs          []pair                         // responses to requests the recording cancels, compared at the end
	cutMessages    int                            // live messages not expected: after the cut of a cut session
	noAnswer       map[string]*noAnswer           // recorded request id key -> request admitted without a recorded answer (unanswered.go)
	liveInvalid    int                            // live server frames not JSON-RPC messages, up to Session.Invalid

	exchMsgs     map[uint64]int      // live HTTP exchange -> server messages that came on it
	closeAt      map[string]int      // recorded request id key -> messages on its stream after which to close it (Step.Closes)
	closed       map[string]bool     // recorded request id keys whose stream the replay closed
	openUses     map[string][]string // recorded request id key -> keys of its uses sent and not answered, oldest first
	answers      map[string]int      // recorded request id key -> live answers to it taken (takeUse), while it is known
	unaddressed  int                 // live responses with a null or absent id
	unsolicited  map[string]int      // live responses to ids the replay did not send, by id key (takeUnsolicited)
	lastSentIdx  int                 // index of the last step sent, -1
	lastSentAt   time.Time           // when it was sent
	lastStepTime int64               // recorded time of the last step admitted
	lastSrvTime  int64               // recorded time of the last server message admitted
	fallbacks    int                 // fallback answers being sent, which the session's end awaits (awaitFallbacks)
}

// stepDesc names an admitted request step.
type stepDesc struct {
	i            int
	method, name string
}

// pair is a recorded response and its live twin.
type pair struct {
	srv    int // Server index of the recorded response
	rec    []byte
	recKey string // recorded id key of the request
	live   []byte
}

// newRunner returns the runner of s, whose fresh ids and progress tokens
// are numbered in space.
func newRunner(s *Session, o *options, cmp *jsondiff.Comparer, space idSpace) *runner {
	r := &runner{
		s: s, o: o, cmp: cmp, changed: make(chan struct{}),
		ids: newIDMap("mcptape-", space), tokens: newIDMap("mcptape-progress-", space), opaque: map[string]string{},
		subs: map[string][]byte{}, inputNames: map[int]map[string]string{},
		srv: map[int]*srvState{}, tokenOwner: s.tokenOwner, recCancelled: s.cancelled, recAnswered: map[string]bool{},
		maxArrivedResp: -1, respIdx: map[string]int{}, liveParts: map[string]*streamParts{}, early: map[string][][]byte{}, reqStep: map[string]stepDesc{},
		sentAt: map[string]time.Time{}, cancelled: map[string]bool{},
		exchReq: map[uint64]string{}, exchanges: map[string]*transport.Exchange{}, launched: map[string]*launch{},
		twins: map[[2]string][]int{}, sessTwins: map[string][]int{},
		recNotif: map[string]int{}, liveNotif: map[string]int{}, recProgress: map[[2]string]int{}, liveProgress: map[[2]string]int{},
		rep: &SessionReport{Session: s.ID, Steps: s.StepCount()}, recUnfinished: s.unfinished,
		openUses: map[string][]string{}, answers: map[string]int{}, lastSentIdx: -1,
		exchMsgs: map[uint64]int{}, closeAt: map[string]int{}, closed: map[string]bool{}, unsolicited: map[string]int{},
		noAnswer: map[string]*noAnswer{},
	}
	if s.CutFrames > 0 {
		r.addNote(english.Count(s.CutFrames, "client frame") + " recorded cut (longer than the recorder's limit): sent as recorded, cut, so the answers may differ")
	}
	if r.tokenOwner == nil { // streamed: its loader fills its own
		r.tokenOwner, r.recCancelled = map[string]string{}, map[string]bool{}
	}
	return r
}

// notify wakes the sender; mu must be held.
func (r *runner) notify() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// fail records the first fatal error; mu must be held.
func (r *runner) fail(err error) {
	if r.failure == nil {
		r.failure = err
	}
	r.notify()
}

// run replays the session over r.conn and fills r.rep.
func (r *runner) run(ctx context.Context) {
	start := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	recvDone, loadDone := make(chan struct{}), make(chan struct{})
	if r.s.Streamed() {
		go func() {
			defer close(loadDone)
			r.stream(ctx)
		}()
	} else {
		r.admitAll()
		close(loadDone)
	}
	go func() {
		defer close(recvDone)
		r.receive(ctx)
	}()
	err := r.send(ctx)
	if err == nil {
		err = r.awaitAnswers(ctx)
	}
	if err == nil {
		err = r.awaitNoAnswers(ctx)
	}
	if err == nil {
		r.awaitFallbacks(ctx)
	}
	r.mu.Lock()
	r.closing = true
	if err == nil {
		err = r.failure
	}
	r.mu.Unlock()
	closeErr := r.conn.Close()
	cancel()
	<-recvDone
	<-loadDone
	r.bg.Wait()
	if err == nil && closeErr != nil && !errors.Is(closeErr, transport.ErrClosed) {
		r.rep.Notes = append(r.rep.Notes, fmt.Sprintf("closing the connection: %v", closeErr))
	}
	if err != nil {
		r.rep.Error = err.Error()
	}
	r.rep.Duration = time.Since(start)
	r.finishReport()
}

// awaitFallbacks waits, up to the timeout, until the fallback answers
// being sent are sent: whether the server took or refused each belongs in
// the report, and closing the connection would cut their POSTs.
func (r *runner) awaitFallbacks(ctx context.Context) {
	t := time.NewTimer(r.o.timeout)
	defer t.Stop()
	for {
		r.mu.Lock()
		n, changed := r.fallbacks, r.changed
		r.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-changed:
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
	}
}

// afterSend notes what a sent step means for later steps (the caller
// counts it sent).
func (r *runner) afterSend(st *Step, ex *transport.Exchange) {
	r.mu.Lock()
	defer r.mu.Unlock()
	// A cancel closes no stream: the recorded client sent it with the
	// stream of the request it names open (and the stream of a batch
	// may carry other answers); where the recorded client closed a
	// stream, the tape says so and a step of its own does it
	// (closeStream).
	if st.Kind != jsonrpc.KindRequest {
		return
	}
	if ex != nil && ex.ID != 0 {
		r.exchReq[ex.ID] = st.IDKey
		r.exchanges[st.IDKey] = ex
	}
}

// pace waits until the step's recorded spacing, scaled by the speed, has
// elapsed since the live equivalents of its dependencies arrived and since
// the previous step was sent.
func (r *runner) pace(ctx context.Context, st *Step, prevTime int64, prevLive time.Time) error {
	if r.o.speed == 0 {
		return nil
	}
	scale := func(ns int64) time.Duration { return ScaleGap(max(ns, 0), r.o.speed) }
	var at time.Time
	if prevTime >= 0 && !prevLive.IsZero() {
		at = prevLive.Add(scale(st.Time - prevTime))
	}
	r.mu.Lock()
	for _, d := range st.Deps {
		if m := r.srv[d]; m != nil && m.arrived {
			if t := m.arrivedAt.Add(scale(st.Time - m.Time)); t.After(at) {
				at = t
			}
		}
	}
	r.mu.Unlock()
	wait := time.Until(at)
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// rewrite returns the live form of step i, or a reason not to send it.
func (r *runner) rewrite(i int, st *Step) (frame []byte, skip string, err error) {
	info := jsonrpc.Classify(st.Frame)
	frame = st.Frame
	r.mu.Lock()
	defer r.mu.Unlock()
	switch st.Kind {
	case jsonrpc.KindRequest:
		liveID, fresh := r.requestID(st, info.ID)
		if fresh {
			if frame, err = jsonrpc.AppendRewrite(nil, frame, jsonrpc.TargetID, liveID); err != nil {
				return nil, "", err
			}
		}
		if st.Method == "subscriptions/listen" {
			r.subs[st.IDKey] = liveID
		}
		if info.ProgressToken.Type != jsonrpc.IDAbsent {
			frame, err = r.rewriteToken(frame, info.ProgressToken)
		}
	case jsonrpc.KindNotification:
		switch {
		case info.CancelTarget.Type != jsonrpc.IDAbsent:
			live, ok := r.ids.live[info.CancelTarget.Key()]
			if !ok {
				return nil, "it cancels a request that was not replayed", nil
			}
			if !bytes.Equal(live, info.CancelTarget.Raw) {
				frame, err = jsonrpc.AppendRewrite(nil, frame, jsonrpc.TargetCancelTarget, live)
			}
		case info.ProgressToken.Type != jsonrpc.IDAbsent:
			frame, err = r.rewriteToken(frame, info.ProgressToken)
		}
	case jsonrpc.KindInvalid, jsonrpc.KindBatch:
		if r.noLines && len(bytes.TrimSpace(frame)) == 0 {
			return nil, "a blank line of a stdio client is nothing to send over this transport", nil
		}
		return frame, "", nil // not a message: sent byte for byte
	case jsonrpc.KindResponse, jsonrpc.KindError:
		if st.Answers < 0 {
			return nil, "it answers no recorded server request", nil
		}
		m := r.srv[st.Answers]
		if m == nil || m.liveID == nil {
			return nil, "the server did not send the request it answers", nil
		}
		frame, err = jsonrpc.AppendRewrite(nil, frame, jsonrpc.TargetID, m.liveID)
		r.retire(st.Answers, "", "")
	}
	if err != nil {
		return nil, "", err
	}
	if srv, ok := r.retryLink(st); ok {
		if frame, _, err = renameKeys(frame, []string{"params", "inputResponses"}, r.inputNames[srv]); err != nil {
			return nil, "", fmt.Errorf("renaming inputResponses keys: %w", err)
		}
	}
	if frame, err = rewriteSubscription(frame, r.subs); err != nil {
		return nil, "", fmt.Errorf("rewriting the subscription id: %w", err)
	}
	return rewriteOpaque(frame, r.opaque), "", nil
}

// rewriteToken gives a progress token its live value (a fresh one the first
// time a recorded token is seen in a request). mu must be held.
func (r *runner) rewriteToken(frame []byte, tok jsonrpc.ID) ([]byte, error) {
	key := tok.Key()
	live, ok := r.tokens.live[key]
	if !ok {
		if tok.Type != jsonrpc.IDString && tok.Type != jsonrpc.IDNumber {
			return frame, nil // not a valid token: send as recorded
		}
		live = r.tokens.assign(key, tok.Type)
	}
	return jsonrpc.AppendRewrite(nil, frame, jsonrpc.TargetProgressToken, live)
}

// record writes a frame to the output tape, if any.
func (r *runner) record(dir tape.Direction, frame []byte, at time.Time, ex *transport.Exchange) {
	if r.o.out == nil {
		return
	}
	rec := &tape.Record{Type: tape.TypeMessage, Time: at.UnixNano(), Session: r.s.ID, Dir: dir, Frame: frame}
	if ex != nil {
		rec.Exchange = ex.ID
	}
	if err := r.o.out.Write(rec); err != nil {
		r.note(fmt.Sprintf("writing the output tape: %v", err))
	}
}

// maxNotes bounds the notes of a session report.
const maxNotes = 50

// note adds a remark to the report; it takes mu.
func (r *runner) note(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.addNote(s)
}

// addNote adds a remark to the report. mu is held.
func (r *runner) addNote(s string) {
	if len(r.rep.Notes) < maxNotes {
		r.rep.Notes = append(r.rep.Notes, s)
	}
}

// describeStep names a step for messages: its method and name, what it
// answers, or what else it is.
func describeStep(st *Step) string {
	switch st.Kind {
	case jsonrpc.KindRequest:
		return describeRequest(st.Method, st.Name, st.IDKey)
	case jsonrpc.KindNotification:
		return termsafe.String(st.Method)
	case jsonrpc.KindResponse, jsonrpc.KindError:
		return "answer to server request " + st.IDKey
	}
	if st.Closes != "" {
		return "closing the stream of request " + st.Closes
	}
	return "a frame that is not a JSON-RPC message"
}

func describeRequest(method, name, idKey string) string {
	method, name = termsafe.String(method), termsafe.String(name) // from the tape: kept text
	id := baseKey(idKey)
	if id != idKey {
		id += fmt.Sprintf(" (use %s)", idKey[len(id)+1:])
	}
	if name != "" {
		return fmt.Sprintf("%s %s, recorded id %s", method, name, id)
	}
	return fmt.Sprintf("%s, recorded id %s", method, id)
}
