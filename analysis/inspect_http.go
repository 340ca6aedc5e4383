package analysis

import (
	"bytes"
	"encoding/json"
	"fmt"
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
	for k, v := range h {
		if strings.ToLower(k) != name {
			continue
		}
		var one string
		if json.Unmarshal(v, &one) == nil {
			return one != ""
		}
		var many []string
		if json.Unmarshal(v, &many) == nil {
			return len(many) > 0 && many[0] != ""
		}
		return len(v) > 0
	}
	return false
}

// httpExchange checks the session header of one HTTP exchange: once a
// server has assigned an Mcp-Session-Id in the tape, every later request
// must carry one, except the exchange that is itself assigned one (an
// initialize).
func (in *Inspector) httpExchange(it *Item) {
	var d httpEvent
	if json.Unmarshal(it.Rec.Data, &d) != nil {
		return
	}
	if d.Phase == "end" {
		in.exchangeEnd(it, d.ClosedBy)
	}
	if hasHeader(d.ResponseHeaders, sessionHeader) {
		in.httpSessions = true
		return
	}
	if !in.httpSessions || hasHeader(d.RequestHeaders, sessionHeader) || d.RequestHeaders == nil {
		return
	}
	switch strings.ToUpper(d.Method) {
	case "POST", "GET", "DELETE":
	default:
		return
	}
	s := in.session(it.Rec.Session, it.Rec.Time)
	in.violation(RuleMissingSessionHeader, it, s, "%s", fmt.Sprintf("%s %s without Mcp-Session-Id (status %d)", d.Method, clip(d.Path, 60), d.Status))
}

// maxOpenExchanges bounds the HTTP exchanges remembered while open.
const maxOpenExchanges = 1 << 16

// exchangeReq names a request sent on an HTTP exchange.
type exchangeReq struct {
	session string
	id      jsonrpc.ID // Raw is a copy
}

// noteExchange remembers the client requests of an HTTP exchange until
// the exchange ends, to tell a stream the client closed from one the
// server ended.
func (in *Inspector) noteExchange(it *Item) {
	if it.Rec.Exchange == 0 || it.Rec.Dir != tape.ClientToServer {
		return
	}
	if len(in.exchanges) >= maxOpenExchanges {
		clear(in.exchanges) // end events lost (a cut tape?): forget, stay bounded
	}
	id := it.Info.ID
	id.Raw = bytes.Clone(id.Raw)
	in.exchanges[it.Rec.Exchange] = append(in.exchanges[it.Rec.Exchange], exchangeReq{it.Rec.Session, id})
}

// exchangeEnd handles the end of an HTTP exchange: a client that closed
// the stream of a request still unanswered cancelled it.
func (in *Inspector) exchangeEnd(it *Item, closedBy string) {
	reqs := in.exchanges[it.Rec.Exchange]
	delete(in.exchanges, it.Rec.Exchange)
	if closedBy != "client" {
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
	}
}
