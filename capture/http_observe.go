package capture

// Watching the proxy from outside (WithObserver): what a metrics exporter
// needs, without capture depending on one.

import (
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
	// or event-stream answer), else ""; "" for a client's response and an
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
// method.
type observedReq struct{ id, method string }

// observeMessage reports one message of x. A client request is noted
// (x.mu is held: the request body is recorded under it); a server
// response or error is reported under the method of the request of x's
// body that it answers (x.mu not held: response messages are recorded
// outside it), "" when x's body holds no request with its id (an answer
// on a GET stream, a client's answer to a server request).
func (x *exchange) observeMessage(dir tape.Direction, frame []byte) {
	obs := x.p.o.obs
	if obs == nil {
		return
	}
	info := jsonrpc.Classify(frame)
	method := info.Method
	switch {
	case dir == tape.ClientToServer && info.Kind == jsonrpc.KindRequest:
		x.observed = append(x.observed, observedReq{info.ID.Key(), info.Method})
	case dir == tape.ServerToClient && (info.Kind == jsonrpc.KindResponse || info.Kind == jsonrpc.KindError):
		key := info.ID.Key()
		x.mu.Lock()
		for _, r := range x.observed {
			if r.id == key {
				method = r.method
				break
			}
		}
		x.mu.Unlock()
	}
	obs.Message(dir, info.Kind, method)
}

// markDispatched notes when the request goes to the upstream (only when
// an observer wants the time).
func (x *exchange) markDispatched() {
	if x.p.o.obs != nil && x.dispatched.IsZero() {
		x.dispatched = x.p.o.now()
	}
}
