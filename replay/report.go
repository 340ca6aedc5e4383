package replay

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/internal/jsondiff"
	"github.com/mcptape/mcptape/internal/termsafe"
	"github.com/mcptape/mcptape/jsonrpc"
)

// Report is the outcome of a replay, one entry per session.
type Report struct {
	Sessions []*SessionReport `json:"sessions"`
}

// SessionReport is the outcome of one replayed session.
type SessionReport struct {
	// Session is the recorded session's name.
	Session string `json:"session"`
	// Steps is the number of client messages in the recording; Sent how
	// many were sent.
	Steps int `json:"steps"`
	Sent  int `json:"sent"`
	// Matched and Differed count the recorded responses whose live twin
	// was equal, or different; Missing those with no live twin, and the
	// recorded server requests the live server did not send; Extra the
	// live responses and server requests with no recorded twin.
	Matched  int `json:"matched"`
	Differed int `json:"differed"`
	Missing  int `json:"missing"`
	Extra    int `json:"extra"`
	// ServerRequests counts the live server requests answered from the
	// recording.
	ServerRequests int `json:"server_requests"`
	// Refused counts the client's answers to server requests (recorded
	// or fallback) that the live server refused with an HTTP error status
	// the recording did not have: each is a problem of kind "refused".
	Refused int `json:"refused,omitempty"`
	// Differences holds one entry per differing response.
	Differences []Difference `json:"differences,omitempty"`
	// Notifications compares the notifications the server sent, per method.
	Notifications []NotificationCount `json:"notifications,omitempty"`
	// Problems lists the missing and extra messages, the fallbacks and
	// the MRTR input keys without a counterpart.
	Problems []Problem `json:"problems,omitempty"`
	// Unanswered counts the requests sent that the recording holds no
	// answer to, and whether the live server answered them: reported,
	// never a difference (absent when there were none).
	Unanswered *Unanswered `json:"recorded_unanswered,omitempty"`
	// Streams gives the timing of answers streamed as several results
	// (absent when there were none).
	Streams *StreamTiming `json:"streams,omitempty"`
	// Notes are remarks that do not change the verdict.
	Notes []string `json:"notes,omitempty"`
	// Error says why the replay of the session failed ("" when it did not).
	Error string `json:"error,omitempty"`
	// Duration is how long the replay took.
	Duration time.Duration `json:"duration_ns"`
}

// Difference is a live response that differs from its recorded twin.
type Difference struct {
	// Request names the request: method, name and recorded id.
	Request string `json:"request"`
	Method  string `json:"method"`
	Name    string `json:"name,omitempty"`
	// Diffs are the differing values (ids, _meta, timestamps and the other
	// volatile paths left out).
	Diffs []jsondiff.Difference `json:"diffs"`

	srv int // Server index of the recorded response, for the order
}

// NotificationCount is how many notifications of one method the recorded
// and the live server sent. Ignored counts never make the verdict fail.
// Progress notifications of cancelled requests are not counted: how many
// arrive before the cancel takes effect depends on timing.
type NotificationCount struct {
	Method   string `json:"method"`
	Recorded int    `json:"recorded"`
	Live     int    `json:"live"`
	Ignored  bool   `json:"ignored,omitempty"`
}

// Problem is a missing or extra message, or a fallback answer.
type Problem struct {
	// Kind is "missing", "extra", "fallback", "refused" (an answer to a
	// server request the live server refused: SessionReport.Refused), or
	// "input" for MRTR inputRequests keys that have no counterpart
	// between the recorded and the live answer (reported, not counted as
	// a difference).
	Kind string `json:"kind"`
	What string `json:"what"`
}

// Differs reports whether the session's live answers differ from the
// recording in a way that counts: a differing, missing or extra message,
// a refused answer, or a notification count that is not ignored.
func (s *SessionReport) Differs() bool {
	if s.Differed > 0 || s.Missing > 0 || s.Extra > 0 || s.Refused > 0 {
		return true
	}
	for _, n := range s.Notifications {
		if !n.Ignored && n.Recorded != n.Live {
			return true
		}
	}
	return false
}

// ExitCode is the verdict as a process exit code: 2 when the replay of a
// session failed, 1 when anything differed, 0 when everything matched.
func (r *Report) ExitCode() int {
	code := 0
	for _, s := range r.Sessions {
		switch {
		case s == nil || s.Error != "":
			return 2
		case s.Differs():
			code = 1
		}
	}
	return code
}

// compare compares a live response with its recorded twin and counts the
// verdict. mu is held, or the receiver stopped.
func (r *runner) compare(p pair) {
	rep := r.rep
	diffs, err := r.cmp.Compare(p.rec, restoreRecorded(p.live, r.ids, r.tokens))
	if err != nil { // not reached: both frames were classified as JSON-RPC
		r.addNote(fmt.Sprintf("comparing the answer to %s: %v", r.requestDesc(p.recKey), err))
		return
	}
	if len(diffs) == 0 {
		rep.Matched++
		return
	}
	rep.Differed++
	d := Difference{Request: r.requestDesc(p.recKey), Diffs: diffs, srv: p.srv}
	if sd, ok := r.reqStep[p.recKey]; ok {
		d.Method, d.Name = sd.method, sd.name
	}
	rep.Differences = append(rep.Differences, d)
}

// finishReport compares the responses kept for the end and counts what is
// missing. It runs after the receiver and the loader stopped, so it needs
// no lock.
func (r *runner) finishReport() {
	rep := r.rep
	sort.Slice(r.pairs, func(i, j int) bool { return r.pairs[i].srv < r.pairs[j].srv })
	for _, p := range r.pairs {
		if r.cancelled[p.recKey] {
			// Whether a cancelled request is answered, and how, depends
			// on timing: it is not compared.
			r.addNote(fmt.Sprintf("the answer to %s, which was cancelled, is not compared", r.requestDesc(p.recKey)))
			continue
		}
		r.compare(p)
	}
	sort.SliceStable(rep.Differences, func(i, j int) bool { return rep.Differences[i].srv < rep.Differences[j].srv })
	early := make([]string, 0, len(r.early))
	for recKey := range r.early {
		early = append(early, recKey)
	}
	sort.Strings(early)
	for _, recKey := range early { // no twin was admitted after all
		for _, frame := range r.early[recKey] {
			if !r.cancelled[recKey] {
				info := jsonrpc.Classify(frame)
				r.unexpectedResponse(recKey, &info)
			}
		}
	}
	r.finishNoAnswers()
	for _, g := range r.pendingServer(jsonrpc.KindResponse) {
		if m := r.srv[g]; !r.cancelled[m.IDKey] {
			rep.Missing++
			if n, ok := r.liveStreamStarted(m.IDKey); ok {
				rep.Problems = append(rep.Problems, Problem{Kind: "unfinished",
					What: fmt.Sprintf("response to %s: the live stream stopped after %d parts, without its end part", r.requestDesc(m.IDKey), n)})
				continue
			}
			rep.Problems = append(rep.Problems, Problem{Kind: "missing", What: "response to " + r.requestDesc(m.IDKey)})
		}
	}
	r.finishStreams()
	for _, g := range r.pendingServer(jsonrpc.KindRequest) {
		m := r.srv[g]
		rep.Missing++
		rep.Problems = append(rep.Problems, Problem{Kind: "missing", What: fmt.Sprintf("server request %s (recorded id %s)", m.Method, m.IDKey)})
	}
	// The progress of a cancelled request depends on timing; of a request
	// answered after the cut, on the cut.
	recNotif, liveNotif := r.recNotif, r.liveNotif
	for k, n := range r.recProgress {
		if !r.recCancelled[k[0]] && !r.afterCut(k[0]) {
			recNotif[k[1]] += n
		}
	}
	for k, n := range r.liveProgress {
		switch {
		case r.recCancelled[k[0]] || r.cancelled[k[0]]:
		case r.afterCut(k[0]):
			r.cutMessages += n
		default:
			liveNotif[k[1]] += n
		}
	}
	if r.cutMessages > 0 {
		r.addNote(fmt.Sprintf("the tape was cut during this session: %d live messages (answers, server requests, progress) belong after the cut and are not compared", r.cutMessages))
	}
	methods := map[string]bool{}
	for m := range recNotif {
		methods[m] = true
	}
	for m := range liveNotif {
		methods[m] = true
	}
	for m := range methods {
		rep.Notifications = append(rep.Notifications, NotificationCount{Method: m, Recorded: recNotif[m], Live: liveNotif[m], Ignored: r.o.ignoreNotif[m]})
	}
	sort.Slice(rep.Notifications, func(i, j int) bool { return rep.Notifications[i].Method < rep.Notifications[j].Method })
}

// WriteJSON writes the report as one indented JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("replay: writing report: %w", err)
	}
	return nil
}

// WriteText writes the report for people: per session a summary line,
// then each difference as a diff, then the problems and notification
// counts that differ.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	for _, s := range r.Sessions {
		if s == nil {
			continue
		}
		verdict := "OK"
		switch {
		case s.Error != "":
			verdict = "FAILED"
		case s.Differs():
			verdict = "DIFFERS"
		}
		refused := ""
		if s.Refused > 0 {
			refused = fmt.Sprintf(", %d refused", s.Refused)
		}
		fmt.Fprintf(&b, "session %q: %s: %d/%d %s sent, %d matched, %d differed, %d missing, %d extra%s, %s answered (%v)\n",
			s.Session, verdict, s.Sent, s.Steps, english.Noun(s.Steps, "message"), s.Matched, s.Differed, s.Missing, s.Extra, refused,
			english.Count(s.ServerRequests, "server request"), s.Duration.Round(time.Millisecond))
		if s.Error != "" {
			fmt.Fprintf(&b, "  error: %s\n", s.Error)
		}
		for _, d := range s.Differences {
			fmt.Fprintf(&b, "  differs: %s\n", d.Request)
			_ = jsondiff.Render(&b, d.Diffs, "    ", 0) // a strings.Builder does not fail
		}
		for _, p := range s.Problems {
			fmt.Fprintf(&b, "  %s: %s\n", p.Kind, p.What)
		}
		s.Unanswered.writeText(&b)
		for _, n := range s.Notifications {
			if n.Recorded != n.Live {
				note := ""
				if n.Ignored {
					note = " (ignored)"
				}
				fmt.Fprintf(&b, "  notifications %s: recorded %d, live %d%s\n", n.Method, n.Recorded, n.Live, note)
			}
		}
		for _, n := range s.Notes {
			fmt.Fprintf(&b, "  note: %s\n", n)
		}
	}
	if _, err := io.WriteString(w, termsafe.String(b.String())); err != nil {
		return fmt.Errorf("replay: writing report: %w", err)
	}
	return nil
}
