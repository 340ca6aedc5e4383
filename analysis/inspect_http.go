package analysis

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// httpEvent is the part of an "http" event's payload (capture.HTTPEvent)
// the analysis reads. Header maps hold a list of values per name (a single
// string is accepted too); names are matched without regard to case.
type httpEvent struct {
	Phase           string                     `json:"phase"`
	Method          string                     `json:"method"`
	Path            string                     `json:"path"`
	Status          int                        `json:"status"`
	ContentType     string                     `json:"content_type"`
	DurationNS      int64                      `json:"duration_ns"`
	ClosedBy        string                     `json:"closed_by"`
	Error           string                     `json:"error"`
	RequestHeaders  map[string]json.RawMessage `json:"request_headers"`
	ResponseHeaders map[string]json.RawMessage `json:"response_headers"`
}

const sessionHeader = "mcp-session-id"

// hasHeader reports whether name (lower case) is in h with a non-empty
// value.
func hasHeader(h map[string]json.RawMessage, name string) bool {
	return headerValue(h, name) != ""
}

// httpExchange checks the session header of one HTTP exchange: once a
// server has assigned an Mcp-Session-Id in the recording (a joined read
// holds several, each with its server), every later request
// must carry one, except the exchange that is itself assigned one and an
// initialize the server refused (a 403 from DNS-rebinding protection
// assigns none), which by the protocol carries none, and a 2026-07-28
// request (Mcp-Protocol-Version header, or a session whose requests carry
// that version): that revision is stateless and has no session id.
func (in *Inspector) httpExchange(it *Item) {
	var d httpEvent
	if json.Unmarshal(it.Rec.Data, &d) != nil {
		return
	}
	in.sessionlessHandshake(it, d.RequestHeaders)
	if d.Phase == "response" {
		in.checkMcpHeaders(it, d.RequestHeaders)
		if in.streamIDs == nil && sessionlessStream(&d) {
			in.streamIDs = newRecentSet(in.o.recent)
		}
	}
	if d.Phase == "end" {
		in.exchangeEnd(it, &d)
		if d.Status >= 400 && strings.EqualFold(headerValue(d.RequestHeaders, "upgrade"), "websocket") {
			in.rep.RefusedUpgradesN++
			if len(in.rep.RefusedUpgrades) < in.o.maxListed {
				in.rep.RefusedUpgrades = append(in.rep.RefusedUpgrades, Example{Session: it.Rec.Session, Seq: it.Seq,
					OffsetNS: it.Rec.Time - in.origin, Detail: fmt.Sprintf("%s %s: HTTP %d", d.Method, clip(d.Path, 60), d.Status)})
			}
		}
	}
	rec := tape.Recording(it.Rec.Exchange) // the server of another recording may assign none
	if hasHeader(d.ResponseHeaders, sessionHeader) {
		if in.httpSessions == nil {
			in.httpSessions = map[uint64]bool{}
		}
		in.httpSessions[rec] = true
		return
	}
	if !in.httpSessions[rec] || hasHeader(d.RequestHeaders, sessionHeader) || d.RequestHeaders == nil {
		return
	}
	switch strings.ToUpper(d.Method) {
	case "POST", "GET", "DELETE":
	default:
		return
	}
	if in.exchangeHas(it.Rec.Exchange, mInitialize) || headerValue(d.RequestHeaders, "mcp-protocol-version") >= headersVersion {
		return
	}
	s := in.session(it.Rec.Session, it.Rec.Time)
	if s.modern {
		return
	}
	in.violation(RuleMissingSessionHeader, it, s, "%s", fmt.Sprintf("%s %s without Mcp-Session-Id (status %d)", d.Method, clip(d.Path, 60), d.Status))
}

// sessionlessStream reports whether d opened an event stream with a GET
// that named no session: the LangGraph HTTP dialect's /mcp/stream.
func sessionlessStream(d *httpEvent) bool {
	return strings.EqualFold(d.Method, "GET") && d.Status == 200 &&
		strings.HasPrefix(d.ContentType, "text/event-stream") && d.RequestHeaders != nil && !hasHeader(d.RequestHeaders, sessionHeader)
}

// streamCopy reports whether it, a response to no request in flight in
// its session, is a copy of the answer to another session's request: it
// came on a sessionless event stream (the LangGraph HTTP dialect sends
// every message to every open stream; the recorder puts the answer in the
// session of its request, and the copies stay where they came) and its id
// is that of a client request seen lately; s, the stream's session, sent
// no message (else the answer would be its own, answered twice).
func (in *Inspector) streamCopy(it *Item, s *sessionState) bool {
	return in.streamIDs != nil && it.Rec.Stream == "get" && s.byDir[dirIndex(tape.ClientToServer)] == 0 &&
		in.streamIDs.has(string(it.Info.ID.Raw))
}

// maxOpenExchanges bounds the HTTP exchanges remembered while open.
const maxOpenExchanges = 1 << 16

// exchangeReq names a request sent on an HTTP exchange.
type exchangeReq struct {
	session string
	method  string
	name    string     // tool or prompt name, resource URI
	args    []byte     // tools/call arguments, kept when the tool has x-mcp-header bindings
	id      jsonrpc.ID // Raw is a copy
}

// exchangeHas reports whether a request of method was sent on exchange.
func (in *Inspector) exchangeHas(exchange uint64, method string) bool {
	for _, e := range in.exchanges[exchange] {
		if e.method == method {
			return true
		}
	}
	return false
}

// noteExchange remembers the client requests of an HTTP exchange until
// the exchange ends, to tell a stream the client closed from one the
// server ended.
func (in *Inspector) noteExchange(it *Item, name string) {
	if it.Rec.Exchange == 0 || it.Rec.Dir != tape.ClientToServer {
		return
	}
	if len(in.exchanges) >= maxOpenExchanges {
		clear(in.exchanges) // end events lost (a cut tape?): forget, stay bounded
	}
	id := it.Info.ID
	id.Raw = bytes.Clone(id.Raw)
	var args []byte
	if it.Info.Method == mToolsCall && in.toolHeaders[name] != nil {
		args = bytes.Clone(lookup(it.Frame, "params", "arguments"))
	}
	reqs := in.exchanges[it.Rec.Exchange]
	if it.Rec.Stream == tape.StreamWS && len(reqs) == cap(reqs) {
		reqs = in.inFlightOnly(reqs)
	}
	in.exchanges[it.Rec.Exchange] = append(reqs, exchangeReq{it.Rec.Session, it.Info.Method, name, args, id})
}

// inFlightOnly drops from reqs, in place, the requests no longer in
// flight. A WebSocket connection is one exchange for its whole session:
// dropping the answered ones whenever the slice is full keeps it about
// the size of what is in flight, at a constant cost per request.
func (in *Inspector) inFlightOnly(reqs []exchangeReq) []exchangeReq {
	return slices.DeleteFunc(reqs, func(e exchangeReq) bool {
		_, ok := in.inflight.Lookup(e.session, tape.ClientToServer, e.id)
		return !ok
	})
}

// exchangeEnd handles the end of an HTTP exchange (d, its "end" event):
// its requests still in flight end as exchangeOutcome says (refused, cut
// by the recorder's shutdown, broken off); otherwise a client that closed
// the stream of a request still unanswered cancelled it.
func (in *Inspector) exchangeEnd(it *Item, d *httpEvent) {
	reqs, notes := in.exchanges[it.Rec.Exchange], in.notes[it.Rec.Exchange]
	delete(in.exchanges, it.Rec.Exchange)
	delete(in.notes, it.Rec.Exchange)
	switch outcome := exchangeOutcome(d); outcome {
	case OutcomeRefused:
		in.refused(reqs, d.Status)
		in.refusedNotes(notes, d.Status)
		return
	case OutcomeCutByShutdown, OutcomeBrokenOff:
		in.settle(reqs, outcome, func(req *request) { in.cut(req, outcome, d.Status) })
		return
	}
	if d.ClosedBy != "client" {
		return
	}
	for _, e := range reqs {
		req, ok := in.inflight.Lookup(e.session, tape.ClientToServer, e.id)
		if !ok || req.cancelled != 0 {
			continue
		}
		req.cancelled = it.Rec.Time
		in.rep.Cancellations.Count++
		in.rep.Cancellations.StreamClosed++
		req.sess.cancelled++
	}
}

// refused takes the requests of an exchange that the server ended with
// HTTP status (4xx or 5xx) out of flight: the client got its answer, the
// status, on the same exchange. They are counted in Report.Refused, not
// as never answered.
func (in *Inspector) refused(reqs []exchangeReq, status int) {
	r := &in.rep.Refused
	in.settle(reqs, OutcomeRefused, func(req *request) {
		r.Count++
		if len(r.Requests) < in.o.maxListed {
			r.Requests = append(r.Requests, in.statusRef(req, status))
		}
		if status == 401 {
			r.Unauthorized++
		} else {
			req.sess.refused++
			keepDetail(in, req.sess, refusedDetails, func() RequestRef { return in.statusRef(req, status) })
		}
	})
}

// sentNote is a client notification sent on an HTTP exchange.
type sentNote struct {
	sess *sessionState
	ref  RequestRef // ID ""
}

// noteNotification remembers a notification the client sent on an HTTP
// exchange (POST) until the exchange ends: a server that refuses the
// exchange with an HTTP error status refuses it too (a batch of
// notifications where the protocol version has no batches).
func (in *Inspector) noteNotification(it *Item, s *sessionState) {
	if it.Rec.Exchange == 0 || it.Rec.Dir != tape.ClientToServer || it.Rec.Stream == tape.StreamWS {
		return
	}
	if in.notes == nil || len(in.notes) >= maxOpenExchanges {
		in.notes = map[uint64][]sentNote{} // end events lost (a cut tape?): forget, stay bounded
	}
	ref := RequestRef{Session: s.id, Dir: string(it.Rec.Dir), Method: clip(it.Info.Method, 60), Seq: it.Seq, OffsetNS: it.Rec.Time - in.origin}
	in.notes[it.Rec.Exchange] = append(in.notes[it.Rec.Exchange], sentNote{s, ref})
}

// refusedNotes counts the client notifications of an exchange that the
// server ended with HTTP status (4xx or 5xx) in Report.Refused: the
// server did not take them. A 401 (the start of an OAuth flow, the
// client sends again once authorized) is left out.
func (in *Inspector) refusedNotes(notes []sentNote, status int) {
	if status == 401 {
		return
	}
	r := &in.rep.Refused
	for _, n := range notes {
		ref := n.ref
		ref.Status = status
		r.Notifications++
		if len(r.NotificationRefs) < in.o.maxListed {
			r.NotificationRefs = append(r.NotificationRefs, ref)
		}
		n.sess.refusedNotes++
		keepDetail(in, n.sess, refusedDetails, func() RequestRef { return ref })
	}
}

// cut counts req, which got no answer by the recorder's shutdown
// (OutcomeCutByShutdown), because the server broke off
// (OutcomeBrokenOff), because the client left (OutcomeClientGone) or
// whose answer may be in records missing from the tape
// (OutcomeLostInGap), with
// the HTTP status of the response that had started on its exchange (0:
// none).
func (in *Inspector) cut(req *request, outcome string, status int) {
	u := &in.rep.Unanswered
	n, list := &u.CutByShutdown, &u.CutByShutdownRequests
	switch outcome {
	case OutcomeBrokenOff:
		n, list = &u.BrokenOff, &u.BrokenOffRequests
		req.sess.brokenOff++
		keepDetail(in, req.sess, brokenOffDetails, func() RequestRef { return in.statusRef(req, status) })
	case OutcomeClientGone:
		n, list = &u.ClientGone, &u.ClientGoneRequests
	case OutcomeLostInGap:
		n, list = &u.LostInGap, &u.LostInGapRequests
	}
	*n++
	in.unansweredDir(req)
	if len(*list) < in.o.maxListed {
		*list = append(*list, in.statusRef(req, status))
	}
}

// unansweredDir counts an unanswered request (UnansweredStats) of the
// server's in UnansweredStats.ServerRequests.
func (in *Inspector) unansweredDir(req *request) {
	if req.dir == tape.ServerToClient {
		in.rep.Unanswered.ServerRequests++
	}
}

// settle takes the requests of an exchange still in flight out of flight,
// counting each with count and ending its operation with outcome. A
// request the client cancelled is left to end as cancelled (it needed no
// answer) unless outcome is OutcomeRefused (the status answered it).
func (in *Inspector) settle(reqs []exchangeReq, outcome string, count func(*request)) {
	for _, e := range reqs {
		req, ok := in.inflight.Lookup(e.session, tape.ClientToServer, e.id)
		if !ok || (req.cancelled != 0 && outcome != OutcomeRefused) {
			continue
		}
		in.inflight.Close(e.session, tape.ClientToServer, e.id)
		count(req)
		in.emitOp(req, req.op, outcome, 0, 0, 0)
		in.release(req)
		in.recycle(req)
	}
}

// nullIDAnswer returns the one request in flight on the exchange of it, an
// error response whose id is null, and takes it out of flight: a server
// that cannot read a request's id (the TypeScript SDK refusing a request
// before initialize with HTTP 400) answers that request on its exchange.
// With none or several requests in flight there, it returns false, and
// over WebSocket, where the exchange is the whole connection: a null id
// there answers a frame that had no readable id (garbage), not whichever
// request happens to be in flight.
func (in *Inspector) nullIDAnswer(it *Item) (*request, bool) {
	if it.Rec.Exchange == 0 || it.Rec.Dir != tape.ServerToClient || it.Member >= 0 || it.Rec.Stream == tape.StreamWS {
		return nil, false
	}
	var found *exchangeReq
	for i, e := range in.exchanges[it.Rec.Exchange] {
		if _, ok := in.inflight.Lookup(e.session, tape.ClientToServer, e.id); !ok {
			continue
		}
		if found != nil {
			return nil, false // ambiguous: which one failed is unknown
		}
		found = &in.exchanges[it.Rec.Exchange][i]
	}
	if found == nil {
		return nil, false
	}
	return in.inflight.Close(found.session, tape.ClientToServer, found.id)
}

// statusRef is the RequestRef of req with the HTTP status of its exchange.
func (in *Inspector) statusRef(req *request, status int) RequestRef {
	ref := in.ref(req)
	ref.Status = status
	return ref
}

// detailList is a list of SessionDetails, for keepDetail: its kind (each
// kind has its own bound, MaxSessionDetails) and where it is.
type detailList[T any] struct {
	kind int
	of   func(*SessionDetails) *[]T
}

// The kinds of SessionDetails' lists.
const (
	kindUnanswered = iota
	kindRefused
	kindBrokenOff
	kindAbandoned
	kindUnfinished
	kindErrorResponse
	kindViolation
	detailKinds
)

// The lists of SessionDetails.
var (
	unansweredDetails    = detailList[RequestRef]{kindUnanswered, func(d *SessionDetails) *[]RequestRef { return &d.Unanswered }}
	refusedDetails       = detailList[RequestRef]{kindRefused, func(d *SessionDetails) *[]RequestRef { return &d.Refused }}
	brokenOffDetails     = detailList[RequestRef]{kindBrokenOff, func(d *SessionDetails) *[]RequestRef { return &d.BrokenOff }}
	abandonedDetails     = detailList[RequestRef]{kindAbandoned, func(d *SessionDetails) *[]RequestRef { return &d.Abandoned }}
	unfinishedDetails    = detailList[RequestRef]{kindUnfinished, func(d *SessionDetails) *[]RequestRef { return &d.Unfinished }}
	errorResponseDetails = detailList[ErrorResponse]{kindErrorResponse, func(d *SessionDetails) *[]ErrorResponse { return &d.ErrorResponses }}
	violationDetails     = detailList[RuleExample]{kindViolation, func(d *SessionDetails) *[]RuleExample { return &d.Violations }}
)
