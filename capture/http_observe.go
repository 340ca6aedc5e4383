package capture

// Watching the proxy from outside (WithObserver): what a metrics exporter
// needs, without capture depending on one.

import (
	"bytes"
	"errors"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// ExchangeStats describes one finished exchange to an HTTPObserver.
type ExchangeStats struct {
	Method string // HTTP method
	Status int    // status the client got (502 when the upstream failed; 0 when none was sent)
	Stream string // StreamPOST, StreamGET, StreamSSE, StreamDELETE or the lower-cased method
	// Duration runs from the request head's arrival to the exchange's end.
	Duration time.Duration
	// Upstream runs from the request's dispatch to the upstream to the
	// upstream's response head (0 when none came).
	Upstream time.Duration
	// Overhead runs from the request head's arrival at the proxy to the
	// request's dispatch to the upstream: the proxy's own time before the
	// upstream has the request (on the lean path, reading a request body
	// of known length is part of it).
	Overhead time.Duration
	// RequestBytes and ResponseBytes are the body bytes forwarded each way.
	RequestBytes, ResponseBytes int64
}

// HTTPObserver hears what the proxy does. Its methods are called
// concurrently, on the forwarding path: they must be quick and must not
// block.
type HTTPObserver interface {
	// Exchange is called once per exchange, when it is over.
	Exchange(e *ExchangeStats)
	// Message is called for each message that crossed the proxy, recorded
	// or not. method is a request's or notification's own; for a server's
	// response or error, the method of the request it answers when that
	// request came in the body of the same exchange (a POST and its JSON
	// or event-stream answer) or in the same session before it (on a GET
	// event stream; a LangGraph-dialect side stream: the request's
	// session), else ""; for a client's response, the method of the server
	// request it answers when that came in its session, else ""; "" for an
	// invalid frame.
	Message(dir tape.Direction, kind jsonrpc.Kind, method string)
}

// WithObserver makes the proxy report its exchanges and messages to obs.
// Messages are then classified (one pass over each frame) even when they
// are not recorded.
func WithObserver(obs HTTPObserver) HTTPOption {
	return func(o *httpOptions) error {
		if obs == nil {
			return errors.New("observer: must not be nil")
		}
		o.obs = obs
		return nil
	}
}

// observeExchange reports a finished exchange.
func (x *exchange) observeExchange(end time.Time, status int, reqSize int64) {
	obs := x.p.o.obs
	if obs == nil {
		return
	}
	e := ExchangeStats{Method: x.method, Status: status, Stream: x.stream, Duration: end.Sub(x.start),
		RequestBytes: reqSize, ResponseBytes: x.bodySize}
	if !x.dispatched.IsZero() {
		e.Overhead = x.dispatched.Sub(x.start)
		if x.gotResp && x.respAt.After(x.dispatched) {
			e.Upstream = x.respAt.Sub(x.dispatched)
		}
	}
	obs.Exchange(&e)
}

// observedReq is a client request of an exchange's body, noted for the
// observer: a response on the exchange with its id is reported under its
// method. seq is its entry in the proxy's method table (0: none).
type observedReq struct {
	id, method string
	seq        uint64
}

// observeRequests notes the requests of body, the whole request body of
// x, for the observer, before the upstream has all of it (its answer may
// come on another exchange at once): in x, for an answer on x's own
// response, and in the proxy's method table under x's session (its
// connection's while none is known: a sessionless request, whose answer
// on a side stream goes to that session), for an answer on another
// exchange. Once per exchange; a body the proxy cannot read as it is
// (Content-Encoding) is noted when recorded instead (observeMessage).
// x.mu held, or x not shared yet.
func (x *exchange) observeRequests(body []byte) {
	if x.p.o.obs == nil || x.obsNoted || headerValue(x.reqHeader, "Content-Encoding") != "" {
		return
	}
	x.obsNoted = true
	x.obsSession = x.conn.session
	if x.sessionKnown {
		x.obsSession = x.session
	}
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		members, _ := jsonrpc.Split(body)
		for _, m := range members {
			x.observeRequest(jsonrpc.Classify(m))
		}
		return
	}
	x.observeRequest(jsonrpc.Classify(body))
}

// observeRequest notes info, a message of x's body, when it is a request.
func (x *exchange) observeRequest(info jsonrpc.Info) {
	if info.Kind != jsonrpc.KindRequest {
		return
	}
	seq := x.p.methods.note(x.obsSession, tape.ClientToServer, &info.ID, info.Method)
	x.observed = append(x.observed, observedReq{info.ID.Key(), info.Method, seq})
}

// observeMessage reports one message of x, recorded in session (x's own
// when ""), to the observer, under the method of the request it answers
// for a response or error:
//   - a server's answer to a request of x's body (noted by
//     observeRequests), or else to a request noted in the method table
//     under session (an answer on a GET event stream: legacy HTTP+SSE,
//     a resumed stream, a LangGraph-dialect side stream);
//   - a client's answer to a server request the table noted under x's
//     session (the server request came on a stream of the session); one
//     that came first is parked there (http_methods.go).
//
// A server request is noted in the table. A client request is noted here
// only when observeRequests could not (x.mu is held then: the request body
// is recorded under it); a server message is recorded outside x.mu.
func (x *exchange) observeMessage(dir tape.Direction, frame []byte, session string) {
	obs := x.p.o.obs
	if obs == nil {
		return
	}
	if session == "" && x.sessionKnown {
		session = x.session
	}
	info := jsonrpc.Classify(frame)
	method := info.Method
	answer := info.Kind == jsonrpc.KindResponse || info.Kind == jsonrpc.KindError
	switch {
	case dir == tape.ClientToServer && info.Kind == jsonrpc.KindRequest:
		if !x.obsNoted && session != "" {
			seq := x.p.methods.note(session, dir, &info.ID, info.Method)
			x.observed = append(x.observed, observedReq{info.ID.Key(), info.Method, seq})
		}
	case dir == tape.ServerToClient && info.Kind == jsonrpc.KindRequest:
		if session != "" {
			x.p.methods.note(session, dir, &info.ID, info.Method)
		}
	case dir == tape.ServerToClient && answer:
		ends := streamDialect.Ends(frame, &info) // a streamed answer's parts share the method
		if r, ok := x.observedAnswer(info.ID.Key()); ok {
			method = r.method
			if ends {
				x.p.methods.forget(x.obsSession, tape.ClientToServer, &info.ID, r.seq)
			}
		} else if session != "" {
			method = x.p.methods.answer(session, tape.ClientToServer, &info.ID, ends)
		}
	case dir == tape.ClientToServer && answer && session != "":
		m, parked := x.p.methods.answerClient(session, &info.ID, info.Kind)
		if parked {
			return // reported with its server request, or when it waited long enough
		}
		method = m
	}
	obs.Message(dir, info.Kind, method)
}

// observedAnswer returns the request of x's body with id key.
func (x *exchange) observedAnswer(key string) (observedReq, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, r := range x.observed {
		if r.id == key {
			return r, true
		}
	}
	return observedReq{}, false
}

// markDispatched notes when the request goes to the upstream, and the
// requests of body, its whole body when known (the lean path), only for
// an observer: without one, the exchange pays this one test.
func (x *exchange) markDispatched(body []byte) {
	if x.p.o.obs == nil {
		return
	}
	if x.dispatched.IsZero() {
		x.dispatched = x.p.o.now()
	}
	if body != nil {
		x.mu.Lock()
		x.observeRequests(body)
		x.mu.Unlock()
	}
}
