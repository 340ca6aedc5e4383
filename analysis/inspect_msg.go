package analysis

// The inspector's handling of client and server requests and
// notifications; answers are in inspect_answer.go.

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// Method names the inspector looks into.
const (
	mInitialize  = "initialize"
	mInitialized = "notifications/initialized"
	mDiscover    = "server/discover"
	mPing        = "ping"
	mToolsCall   = "tools/call"
	mToolsList   = "tools/list"
	mPromptsGet  = "prompts/get"
	mResRead     = "resources/read"
	mTasksGet    = "tasks/get"
	mTasksResult = "tasks/result"
	mTasksCancel = "tasks/cancel"
)

// Keys of the 2026-07-28 _meta objects.
const (
	metaVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientInfo = "io.modelcontextprotocol/clientInfo"
	metaServerInfo = "io.modelcontextprotocol/serverInfo"
)

// serverPeer reads the server's name from an initialize or server/discover
// result: serverInfo, or (2026-07-28) _meta's serverInfo key.
func serverPeer(result []byte) *Peer {
	if p := peerAt(result, "serverInfo"); p != nil {
		return p
	}
	return peerAt(result, "_meta", metaServerInfo)
}

// Result types of 2026-07-28.
const (
	resultInputRequired = "input_required"
	resultTask          = "task"
)

// mrtrMethod reports whether method may answer input_required.
func mrtrMethod(method string) bool {
	return method == mToolsCall || method == mPromptsGet || method == mResRead
}

// metaChecks is how many client requests of a session without a known
// version are searched for a 2026-07-28 _meta version.
const metaChecks = 8

// request handles a request message.
func (in *Inspector) request(it *Item, s *sessionState) {
	rec, info, frame := it.Rec, &it.Info, it.Frame
	method := in.name(info.Method)
	s.count(rec.Dir, jsonrpc.KindRequest, method)
	if in.streamIDs != nil && rec.Dir == tape.ClientToServer && Pairable(info.ID) {
		in.streamIDs.add(string(info.ID.Raw))
	}
	if strings.HasPrefix(info.Method, "notifications/") {
		in.violation(RuleNotificationWithID, it, s, "notifications take no id")
	}
	if method == mInitialize && it.Member >= 0 {
		in.violation(RuleInitializeBatched, it, s, "initialize is never batched")
	}
	// Read params only when something in them matters: one walk.
	var f []span
	c2s := rec.Dir == tape.ClientToServer
	checkMeta := c2s && s.version == "" && s.metaChecks < metaChecks
	switch method {
	case mToolsCall, mPromptsGet, mResRead, mTasksGet, mTasksResult, mTasksCancel, mInitialize:
		checkMeta = checkMeta || (c2s && s.version == "")
	}
	if checkMeta || method == mToolsCall || method == mPromptsGet || method == mResRead ||
		method == mTasksGet || method == mTasksResult || method == mTasksCancel || method == mInitialize {
		f = payloadFields(it, "params", paramKeys, in.pf[:])
		if checkMeta {
			s.metaChecks++
		}
	}
	if c2s {
		in.lifecycle(it, s, method, f)
	}
	req := in.newRequest()
	*req = request{sess: s, seq: it.Seq, time: rec.Time, dir: rec.Dir, method: method, bytes: int64(len(frame))}
	if fs := it.fields; fs == nil || !fs.idInt || !req.id.setInt(fs.idNum, len(info.ID.Raw)) {
		req.id.set(info.ID.Raw)
	}
	switch method {
	case mToolsCall, mPromptsGet:
		req.name = in.nameOf(f[pName].of(frame))
		if method == mToolsCall {
			s.tool(req.name)
		}
	case mResRead:
		req.name = in.nameOf(f[pURI].of(frame))
	case mTasksGet, mTasksResult, mTasksCancel:
		if id, ok := stringValue(f[pTaskID].of(frame)); ok {
			if op := in.tasks[taskKey(opScope(s, rec), id)]; op != nil {
				req.taskPollingOf = op
				op.polls++
				in.rep.Operations.Tasks.Polls++
			}
		}
	}
	if mrtrMethod(method) {
		if f[pInputResponses].end != 0 || f[pRequestState].end != 0 {
			if op := in.retried(opKey{opScope(s, rec), rec.Dir, method, req.name}); op != nil {
				op.rounds++
				req.op = op
			}
		}
		req.wantsTask = f[pTask].end != 0
	}
	if tok := info.ProgressToken; Pairable(tok) {
		in.buf = tokenKey(in.buf[:0], rec.Session, rec.Dir, tok)
		if other := in.tokens[string(in.buf)]; other != nil {
			in.violation(RuleProgressTokenInUse, it, s, "token %s in use by id %s (#%d)", clip(string(tok.Raw), 20), clip(other.id.String(), 20), other.seq)
		}
		req.token = string(in.buf)
		in.tokens[req.token] = req
		in.rep.Progress.Requested++
	}
	if !Pairable(info.ID) {
		return // a null or malformed id: counted as a violation, cannot be answered
	}
	in.noteExchange(it, req.name)
	var prev *request
	var reused bool
	if fs := it.fields; fs != nil && fs.idInt {
		prev, reused = in.inflight.openInt(s.pairs(rec.Dir), rec.Session, rec.Dir, fs.idNum, req)
	} else {
		prev, reused = in.inflight.Open(rec.Session, rec.Dir, info.ID, req)
	}
	if reused {
		in.violation(RuleIDReused, it, s, "in flight since #%d", prev.seq)
		in.release(prev)
		in.superseded(prev)
		in.emitOp(prev, prev.op, OutcomeUnanswered, 0, 0, 0)
		in.recycle(prev)
	} else if in.buf = tokenKey(in.buf[:0], rec.Session, rec.Dir, info.ID); in.answeredIDs.has(string(in.buf)) {
		in.violation(RuleIDReusedAfter, it, s, "id %s was answered before", clip(info.ID.String(), 20))
	}
}

// lifecycle checks the handshake of the client's requests and learns the
// session's protocol version and client from the params fields f (nil
// when params were not read).
func (in *Inspector) lifecycle(it *Item, s *sessionState, method string, f []span) {
	frame := it.Frame
	if s.version == "" && f != nil {
		if meta := f[pMeta].of(frame); meta != nil {
			if v, ok := lookupString(meta, metaVersion); ok { // 2026-07-28: no handshake
				s.version, s.modern = v, true
				if s.client == nil {
					s.client = peerAt(meta, metaClientInfo)
				}
			}
		}
	}
	switch method {
	case mInitialize:
		s.initSent = true
		if s.sessionless && it.Rec.Exchange != 0 {
			in.deferHandshake(it, s, true)
		}
		if v, ok := stringValue(f[pProtocolVersion].of(frame)); ok {
			s.requested = v
		}
		if p := peerAt(f[pClientInfo].of(frame)); p != nil {
			s.client = p
		}
	case mPing, mDiscover:
	default:
		if s.sessionless && it.Rec.Exchange != 0 && !s.modern {
			in.deferHandshake(it, s, false)
			return
		}
		if !s.initSent && !s.modern && !s.flaggedEarly {
			s.flaggedEarly = true
			in.violation(RuleBeforeInitialize, it, s, "before initialize (reported once per session)")
		}
	}
}

// nameOf returns the JSON string raw as an interned name ("" when raw is
// not a string).
func (in *Inspector) nameOf(raw []byte) string {
	if len(raw) >= 2 && raw[0] == '"' && bytes.IndexByte(raw, '\\') < 0 {
		return in.nameBytes(raw[1 : len(raw)-1])
	}
	if v, ok := stringValue(raw); ok {
		return in.name(v)
	}
	return ""
}

// newRequest returns a request from the free list, or a new one.
func (in *Inspector) newRequest() *request {
	if n := len(in.free); n > 0 {
		req := in.free[n-1]
		in.free = in.free[:n-1]
		return req
	}
	return &request{}
}

// recycle returns a request nothing refers to any more to the free list.
func (in *Inspector) recycle(req *request) {
	if len(in.free) < cap(in.free) {
		*req = request{}
		in.free = append(in.free, req)
	}
}

// peerAt reads {name, version} at path in data.
func peerAt(data []byte, path ...string) *Peer {
	raw := data
	if len(path) > 0 {
		raw = lookup(data, path...)
	}
	if raw == nil {
		return nil
	}
	name, ok := lookupString(raw, "name")
	if !ok {
		return nil
	}
	ver, _ := lookupString(raw, "version")
	return &Peer{Name: cutText(name, maxPeerText), Version: cutText(ver, maxPeerText)}
}

// maxPeerText bounds, in characters, the name and version of a client or
// server (clientInfo, serverInfo) that a report and the requests export
// keep: whole up to it, a longer one cut there and ending in "…" (see
// docs/requests-format.md). The text reports clip them shorter (peerText).
const maxPeerText = 1024

// cutText returns s whole when it has at most n runes, else its first
// n-1 runes and "…". Unlike clip it keeps control characters: the
// exports escape them.
func cutText(s string, n int) string {
	if len(s) <= n || utf8.RuneCountInString(s) <= n {
		return s
	}
	i, k := 0, 0
	for ; k < n-1; k++ {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i] + "…"
}

// tokenKey appends the key of a progress token of a request sent in dir.
func tokenKey(dst []byte, session string, dir tape.Direction, tok jsonrpc.ID) []byte {
	dst = append(dst, session...)
	dst = append(dst, 0)
	dst = append(dst, dir...)
	dst = append(dst, 0)
	return tok.AppendKey(dst)
}

func taskKey(scope, id string) string { return scope + "\x00" + id }

// opScopeOf returns opScope of the session of rec, a message, as far as
// the Inspector knows it.
func (in *Inspector) opScopeOf(rec *tape.Record) string {
	return opScope(in.sessions[rec.Session], rec)
}

// opScope returns the scope of the operations (MRTR, tasks) of session s
// that rec, a message of it, belongs to: the session, or for a
// sessionless one (HTTP without a session id, one session per
// connection) every connection of its recording, since a client may go on
// on another connection (an MRTR retry, a task's polls; a stateless
// server's task ids are its own, not a connection's).
func opScope(s *sessionState, rec *tape.Record) string {
	if s == nil || !s.sessionless {
		return rec.Session
	}
	return "\x00connections of recording " + strconv.FormatUint(tape.Recording(rec.Exchange), 10)
}

// release forgets what refers to a request that is no longer in flight.
func (in *Inspector) release(req *request) {
	if req.token != "" {
		if in.tokens[req.token] == req {
			delete(in.tokens, req.token)
		}
		in.recent.add(req.token)
	}
}

// superseded lists a request that lost its pairing to an id reuse: in
// its session's details (whatever the other sessions lost) and, while
// there is room, in the tape's list.
func (in *Inspector) superseded(req *request) {
	in.rep.Unanswered.Count++
	in.unansweredDir(req)
	req.sess.unanswered++
	keepDetail(in, req.sess, unansweredDetails, func() RequestRef { return in.ref(req) })
	if len(in.unanswered) < in.o.maxListed {
		in.unanswered = append(in.unanswered, in.ref(req))
	}
}

func (in *Inspector) ref(req *request) RequestRef {
	return RequestRef{Session: req.sess.id, Dir: string(req.dir), ID: clip(req.id.String(), 60), Method: req.method,
		Name: clip(req.name, 60), Seq: req.seq, OffsetNS: req.time - in.origin}
}

// notification handles a notification message.
func (in *Inspector) notification(it *Item, s *sessionState) {
	rec, info := it.Rec, &it.Info
	s.count(rec.Dir, jsonrpc.KindNotification, in.name(info.Method))
	in.noteNotification(it, s)
	switch info.Method {
	case jsonrpc.MethodProgress:
		in.progress(it, s)
	case jsonrpc.MethodCancelled:
		in.cancel(it, s)
	}
}

// progress handles notifications/progress.
func (in *Inspector) progress(it *Item, s *sessionState) {
	tok := it.Info.ProgressToken
	if !Pairable(tok) {
		return // bad-progress-token already counted
	}
	in.rep.Progress.Notifications++
	in.buf = tokenKey(in.buf[:0], it.Rec.Session, Opposite(it.Rec.Dir), tok)
	req := in.tokens[string(in.buf)]
	if req == nil {
		if in.recent.has(string(in.buf)) {
			in.rep.Progress.AfterResponse++
			in.violation(RuleProgressAfterResp, it, s, "token %s, request already answered", clip(string(tok.Raw), 20))
		} else {
			in.rep.Progress.UnknownToken++
			in.violation(RuleProgressUnknownToken, it, s, "token %s unknown", clip(string(tok.Raw), 20))
		}
		return
	}
	req.progress++
	if req.progress == 1 {
		in.rep.Progress.Streams++
		req.firstProgress = it.Rec.Time
		in.firstProgress.record(it.Rec.Time - req.time)
	}
	in.rep.Progress.MaxPerRequest = max(in.rep.Progress.MaxPerRequest, req.progress)
	f := payloadFields(it, "params", paramKeys, in.pf[:])
	if v, ok := number(f[pProgress].of(it.Frame)); ok {
		if req.progress > 1 && v <= req.lastProgress {
			in.rep.Progress.NotIncreasing++
			in.violation(RuleProgressNotIncr, it, s, "progress %v after %v (request id %s)", v, req.lastProgress, clip(req.id.String(), 20))
		}
		req.lastProgress = v
	}
}

// cancel handles notifications/cancelled.
func (in *Inspector) cancel(it *Item, s *sessionState) {
	if it.Rec.Exchange != 0 && s.version == "2026-07-28" {
		in.violation(RuleCancelled2026HTTP, it, s, "close the request's stream instead")
	}
	target := it.Info.CancelTarget
	if !Pairable(target) {
		return
	}
	req, ok := in.inflight.Lookup(it.Rec.Session, it.Rec.Dir, target)
	if !ok {
		in.rep.Cancellations.Count++
		in.rep.Cancellations.UnknownTarget++
		return
	}
	if req.cancelled == 0 { // a second cancel of the same request adds nothing
		req.cancelled = it.Rec.Time
		in.rep.Cancellations.Count++
		req.sess.cancelled++
	}
	if req.method == mInitialize {
		in.violation(RuleInitializeCancelled, it, s, "initialize is never cancelled")
	}
}
