package mock

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// Stream sends one frame to the client: a stdio line, an SSE event.
type Stream func(ctx context.Context, frame []byte) error

// Conn is one client connection (an MCP session) served by a Mock. Handle
// may be called from several goroutines; the play functions it returns run
// concurrently with each other and with Handle.
type Conn struct {
	m       *Mock
	id      string
	session Stream // where messages no request owns go; nil: nowhere

	mu      sync.Mutex
	nextID  int64
	waiting map[string]chan []byte        // live server request id key -> its answer
	running map[string]context.CancelFunc // live client request id key -> stop its playback
	tails   sync.WaitGroup
	life    context.Context // ended by Close: stops the tails
	end     context.CancelFunc
	gone    chan struct{} // closed when the client can send nothing more
	goneOne sync.Once
	// streams marks a connection whose requests have a stream of their
	// own (HTTP POST): a request the recorded server never answered ends
	// its stream after its playback, as the recorded POST stream ended.
	streams bool
}

// NewConn returns a connection of m. session carries the messages the
// server sent outside any request (stdio: stdout; HTTP: the GET stream);
// it may be nil, and such messages are then not sent.
func (m *Mock) NewConn(session Stream) *Conn {
	life, end := context.WithCancel(context.Background())
	return &Conn{m: m, id: m.nextConn(), session: session, life: life, end: end,
		waiting: map[string]chan []byte{}, running: map[string]context.CancelFunc{}, gone: make(chan struct{})}
}

// InputClosed tells the connection that the client can send nothing more
// (stdin ended): playback that waits for the client (its answers, a
// cancel) stops, and so does what was sent after an answer (the tail) at
// its first message not due yet; the rest goes on.
func (c *Conn) InputClosed() { c.goneOne.Do(func() { close(c.gone) }) }

// SetSession changes the stream of the messages no request owns (an HTTP
// client opened or closed its GET stream).
func (c *Conn) SetSession(s Stream) {
	c.mu.Lock()
	c.session = s
	c.mu.Unlock()
}

// Wait waits for the playback of messages sent after answers to end.
func (c *Conn) Wait() { c.tails.Wait() }

// Close stops the playback of messages sent after answers and waits for
// it to end: nothing is sent on the session stream afterwards by a tail
// already started. Call it once the plays have returned.
func (c *Conn) Close() {
	c.end()
	c.tails.Wait()
}

// Play is the work left after Handle for one request: sending its recorded
// answer and what came with it. It may block for the recorded latency and
// for the client's answers to server requests; it returns once the answer
// is sent, or ctx ends, or the request is cancelled.
type Play func(ctx context.Context)

// Handle takes one frame from the client. Answers go to reply (stdio: the
// output; HTTP: the POST's stream). The matching and the fault draws are
// done here, in arrival order; what takes time is left to the returned
// Play (nil when there is nothing more to do).
func (c *Conn) Handle(ctx context.Context, frame []byte, exchange uint64, reply Stream) Play {
	c.m.record(c.id, tape.ClientToServer, frame, exchange)
	info := jsonrpc.Classify(frame)
	switch info.Kind {
	case jsonrpc.KindBatch:
		members, err := jsonrpc.Split(frame)
		if err != nil { // not reached: Classify said it is an array
			c.send(ctx, reply, errorFrame(nil, codeParse, "Parse error"))
			return nil
		}
		if len(members) == 0 { // JSON-RPC 2.0: one error response, not an array
			c.send(ctx, reply, emptyBatchError())
			return nil
		}
		var plays []Play
		for _, m := range members {
			if p := c.handle(ctx, m, jsonrpc.Classify(m), reply); p != nil {
				plays = append(plays, p)
			}
		}
		if len(plays) == 0 {
			return nil
		}
		return func(ctx context.Context) {
			var wg sync.WaitGroup
			for _, p := range plays {
				wg.Add(1)
				go func() { defer wg.Done(); p(ctx) }()
			}
			wg.Wait()
		}
	case jsonrpc.KindInvalid:
		if info.Violations.Has(jsonrpc.ViolationInvalidJSON) {
			c.send(ctx, reply, errorFrame(nil, codeParse, "Parse error"))
		} else {
			c.send(ctx, reply, errorFrame(idOrNil(info.ID), codeInvalidRequest, "Invalid Request: "+info.Violations.String()))
		}
		return nil
	}
	return c.handle(ctx, frame, info, reply)
}

// handle takes one message (not a batch).
func (c *Conn) handle(ctx context.Context, frame []byte, info jsonrpc.Info, reply Stream) Play {
	switch info.Kind {
	case jsonrpc.KindRequest:
		if info.ID.Type == jsonrpc.IDNull { // an id the answer could not be told by
			c.send(ctx, reply, errorFrame(nil, codeInvalidRequest, "Invalid Request: the id of a request must not be null"))
			return nil
		}
		return c.request(ctx, frame, &info, reply)
	case jsonrpc.KindResponse, jsonrpc.KindError:
		c.mu.Lock()
		ch, ok := c.waiting[info.ID.Key()]
		delete(c.waiting, info.ID.Key())
		c.mu.Unlock()
		if !ok {
			c.m.note("the client answered id %s, which the mock never asked", info.ID.Raw)
			return nil
		}
		ch <- append([]byte(nil), frame...)
	case jsonrpc.KindNotification:
		if info.Method == "notifications/cancelled" && info.CancelTarget.Type != jsonrpc.IDAbsent {
			c.mu.Lock()
			stop := c.running[info.CancelTarget.Key()]
			c.mu.Unlock()
			if stop != nil {
				stop()
			}
		}
	default:
		c.send(ctx, reply, errorFrame(idOrNil(info.ID), codeInvalidRequest, "Invalid Request: "+info.Violations.String()))
	}
	return nil
}

// JSON-RPC error codes the mock answers with.
const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603
)

// request matches a client request and returns its playback.
func (c *Conn) request(ctx context.Context, frame []byte, info *jsonrpc.Info, reply Stream) Play {
	liveID := append([]byte(nil), info.ID.Raw...)
	r, err := parseRequest(frame)
	if err != nil {
		c.send(ctx, reply, errorFrame(liveID, codeInvalidRequest, "Invalid Request: "+err.Error()))
		return nil
	}
	if r.method == "ping" && len(c.m.x.byKey["ping"]) == 0 {
		c.send(ctx, reply, resultFrame(liveID, `{}`)) // a server answers ping, recorded or not
		return nil
	}
	if r.method == "logging/setLevel" && c.m.x.logging && len(c.m.x.methodEntries(r.method)) == 0 {
		// A server that offers logging accepts a level (the Inspector CLI
		// sets one before anything else): recorded or not.
		c.send(ctx, reply, resultFrame(liveID, `{}`))
		return nil
	}
	e, why := c.m.choose(&r)
	if e == nil {
		code := codeInvalidParams
		if len(c.m.x.methodEntries(r.method)) == 0 {
			code = codeMethodNotFound
		}
		c.send(ctx, reply, errorFrame(liveID, code, "mcptape mock: no recorded answer for "+r.describe()+": "+why))
		return nil
	}
	if r.method == "initialize" {
		c.negotiate(frame, e)
	}
	f := c.m.draw()
	var token []byte
	if info.ProgressToken.Type != jsonrpc.IDAbsent {
		token = append([]byte(nil), info.ProgressToken.Raw...)
	}
	playCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	key := info.ID.Key()
	c.mu.Lock()
	c.running[key] = stop
	c.mu.Unlock()
	return func(ctx context.Context) {
		defer func() {
			c.mu.Lock()
			delete(c.running, key)
			c.mu.Unlock()
			stop()
		}()
		go func() {
			select {
			case <-ctx.Done():
				stop()
			case <-playCtx.Done():
			}
		}()
		c.play(playCtx, e, liveID, token, f, reply)
	}
}

// negotiate notes a client that asked for another protocol version than
// the recorded one: the recorded answer, with its version, is what a
// server that speaks only that version says.
func (c *Conn) negotiate(frame []byte, e *entry) {
	var m struct {
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"params"`
	}
	if json.Unmarshal(frame, &m) != nil {
		return
	}
	if v := c.m.x.version; v != "" && m.Params.ProtocolVersion != v {
		c.m.note("the client asked for protocol %q; the recorded server speaks %q and answered so", m.Params.ProtocolVersion, v)
	}
}

// send writes a frame to s and records it.
func (c *Conn) send(ctx context.Context, s Stream, frame []byte) bool {
	if s == nil {
		return false
	}
	c.m.record(c.id, tape.ServerToClient, frame, 0)
	if err := s(ctx, frame); err != nil {
		return false
	}
	return true
}

// sessionStream returns the stream for messages no request owns.
func (c *Conn) sessionStream() Stream {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.session
}

// freshID returns a new id for a server request, of the JSON type of the
// recorded one.
func (c *Conn) freshID(t jsonrpc.IDType) []byte {
	c.mu.Lock()
	c.nextID++
	n := c.nextID
	c.mu.Unlock()
	if t == jsonrpc.IDString {
		return []byte(`"mcptape-mock-` + strconv.FormatInt(n, 10) + `"`)
	}
	return strconv.AppendInt(nil, n, 10)
}

// emptyBatchError is the answer to an empty batch ("[]").
func emptyBatchError() []byte {
	return errorFrame(nil, codeInvalidRequest, "Invalid Request: empty batch")
}

// errorFrame returns a JSON-RPC error response (id nil: null).
func errorFrame(id []byte, code int, message string) []byte {
	msg, _ := json.Marshal(message) // a string always encodes
	if id == nil {
		id = []byte("null")
	}
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`, id, code, msg)
}

// resultFrame returns a JSON-RPC success response.
func resultFrame(id []byte, result string) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":%s}`, id, result)
}

// idOrNil returns the raw id when it is a usable one.
func idOrNil(id jsonrpc.ID) []byte {
	if id.Type == jsonrpc.IDString || id.Type == jsonrpc.IDNumber {
		return id.Raw
	}
	return nil
}

// resultVersion returns result.protocolVersion of an initialize answer.
func resultVersion(frame []byte) string {
	var m struct {
		Result struct {
			ProtocolVersion string `json:"protocolVersion"`
		} `json:"result"`
	}
	if json.Unmarshal(frame, &m) != nil {
		return ""
	}
	return m.Result.ProtocolVersion
}

// offersLogging reports whether frame, an initialize answer, offers the
// logging capability.
func offersLogging(frame []byte) bool {
	var m struct {
		Result struct {
			Capabilities struct {
				Logging json.RawMessage `json:"logging"`
			} `json:"capabilities"`
		} `json:"result"`
	}
	return json.Unmarshal(frame, &m) == nil && len(m.Result.Capabilities.Logging) > 0 && string(m.Result.Capabilities.Logging) != "null"
}

// methodEntries returns the recorded requests of a method.
func (x *Index) methodEntries(method string) []*entry {
	var out []*entry
	for _, e := range x.entries {
		if e.req.method == method {
			out = append(out, e)
		}
	}
	return out
}
