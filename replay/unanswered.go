package replay

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/jsonrpc"
)

// A request recorded without an answer (the server broke off, the
// recorder was stopped or cut, records were lost, or the server never
// answered) is sent like any other; whether the live server answers it
// is what a replay of a bug recording may be about, so it is reported on
// its own (SessionReport.Unanswered), not as a difference: a live answer
// to it is not extra, and its absence is not missing. The replay waits
// for those answers, once everything else is done, until the settle
// margin (WithSettle) has passed since the last client message was sent.
// Requests the recording cancels (notifications/cancelled, or the HTTP
// stream closed by the client), refused with an HTTP error status, or
// whose id is null are left out: they are not expected to be answered.

// maxUnansweredNamed bounds the requests Unanswered names of each kind.
const maxUnansweredNamed = 10

// Unanswered counts the requests sent that the recording holds no answer
// to, and whether the live server answered them.
type Unanswered struct {
	// Requests counts them; AnsweredLive those the live server answered
	// (with a result or an error), NotAnsweredLive the others.
	Requests        int `json:"requests"`
	AnsweredLive    int `json:"answered_live"`
	NotAnsweredLive int `json:"not_answered_live"`
	// Answered and NotAnswered name the first ten of each, in the order
	// they were sent; an answer that is an error says so.
	Answered    []string `json:"answered,omitempty"`
	NotAnswered []string `json:"not_answered,omitempty"`
}

// noAnswer is a request admitted with no recorded answer (yet).
type noAnswer struct {
	step     int    // its step index
	answered bool   // a live answer came
	how      string // what the live answer was, when not a result
}

// admitNoAnswer notes a request step that may have no recorded answer:
// its answer, admitted first for a session held in memory, would be in
// respIdx. mu is held.
func (r *runner) admitNoAnswer(i int, st *Step) {
	if st.Closes != "" {
		delete(r.noAnswer, st.Closes) // the recorded client gave it up
		return
	}
	if st.Kind != jsonrpc.KindRequest || st.Refused != 0 || baseKey(st.IDKey) == "null" {
		return
	}
	if _, answered := r.respIdx[st.IDKey]; !answered {
		r.noAnswer[st.IDKey] = &noAnswer{step: i}
	}
}

// takeNoAnswer counts a live answer to recKey when the recording holds no
// answer to that request, and reports whether it did. mu is held.
func (r *runner) takeNoAnswer(recKey string, info *jsonrpc.Info) bool {
	n, ok := r.noAnswer[recKey]
	if !ok || n.answered {
		return false
	}
	n.answered = true
	if info != nil && info.Kind == jsonrpc.KindError {
		n.how = fmt.Sprintf("error %d", info.ErrorCode)
	}
	r.notify()
	return true
}

// expectedNoAnswer reports whether key, a request admitted without a
// recorded answer, counts: it was sent and not cancelled, live or in the
// recording. mu is held.
func (r *runner) expectedNoAnswer(key string) bool {
	_, sent := r.sentAt[key]
	return sent && !r.cancelled[key] && !r.recCancelled[key] && !r.closed[key]
}

// awaitNoAnswers waits, once everything else was waited for, until each
// request recorded without an answer has a live one, or the settle
// margin has passed since the last client message was sent.
func (r *runner) awaitNoAnswers(ctx context.Context) error {
	if r.o.noTrailing {
		return nil
	}
	r.mu.Lock()
	from := r.lastSentAt
	r.mu.Unlock()
	if from.IsZero() {
		return nil
	}
	_, err := r.waitUntil(ctx, from.Add(r.o.settle), r.noAnswersArrived)
	return err // on time out, the report says which did not come
}

// noAnswersArrived reports whether every request recorded without an
// answer that counts has its live answer, taken or held back until the
// recording is read to its end (early). mu is held.
func (r *runner) noAnswersArrived() bool {
	for key, n := range r.noAnswer {
		if !n.answered && len(r.early[key]) == 0 && r.expectedNoAnswer(key) {
			return false
		}
	}
	return true
}

// finishNoAnswers fills SessionReport.Unanswered. It runs once the live
// answers held back (early) were taken.
func (r *runner) finishNoAnswers() {
	keys := make([]string, 0, len(r.noAnswer))
	for key := range r.noAnswer {
		if r.expectedNoAnswer(key) {
			keys = append(keys, key)
		}
	}
	if len(keys) == 0 {
		return
	}
	sort.Slice(keys, func(i, j int) bool { return r.noAnswer[keys[i]].step < r.noAnswer[keys[j]].step })
	u := &Unanswered{Requests: len(keys)}
	for _, key := range keys {
		n, what := r.noAnswer[key], r.requestDesc(key)
		if !n.answered {
			u.NotAnsweredLive++
			if len(u.NotAnswered) < maxUnansweredNamed {
				u.NotAnswered = append(u.NotAnswered, what)
			}
			continue
		}
		u.AnsweredLive++
		if n.how != "" {
			what += " (" + n.how + ")"
		}
		if len(u.Answered) < maxUnansweredNamed {
			u.Answered = append(u.Answered, what)
		}
	}
	r.rep.Unanswered = u
}

// writeText writes the lines of the text report about u.
func (u *Unanswered) writeText(b *strings.Builder) {
	if u == nil || u.Requests == 0 {
		return
	}
	fmt.Fprintf(b, "  %s recorded without an answer: %d answered live, %d not\n",
		english.Count(u.Requests, "request"), u.AnsweredLive, u.NotAnsweredLive)
	named := func(label string, list []string, total int) {
		for _, what := range list {
			fmt.Fprintf(b, "    %s: %s\n", label, what)
		}
		if total > len(list) {
			fmt.Fprintf(b, "    %s: %d more\n", label, total-len(list))
		}
	}
	named("answered live", u.Answered, u.AnsweredLive)
	named("not answered live", u.NotAnswered, u.NotAnsweredLive)
}
