package analysis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"

	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// Inspect defaults; see the options of the same names.
const (
	DefaultMaxSessions = 1000
	DefaultMaxExamples = 3
	DefaultMaxDistinct = 1000
	DefaultMaxListed   = 20
	DefaultRecent      = 4096
)

// Option configures an Inspector. A bad value is an error.
type Option func(*options) error

type options struct {
	maxSessions int
	maxExamples int
	maxDistinct int
	maxListed   int
	recent      int
	// sessionDetails is WithSessionDetails's n (0: none kept)
	sessionDetails int
	onOp           func(*Operation) // WithOperations
	// onSettled, when set, is called with each request that leaves
	// flight with no answer, or with a JSON-RPC error (whose id may be
	// null), with its outcome and error code: the OTLP export ends the
	// spans of requests it saw no answer to as the Inspector decides. req
	// is recycled afterwards.
	onSettled func(req *request, outcome string, code int64)
}

func defaultOptions() options {
	return options{
		maxSessions: DefaultMaxSessions,
		maxExamples: DefaultMaxExamples,
		maxDistinct: DefaultMaxDistinct,
		maxListed:   DefaultMaxListed,
		recent:      DefaultRecent,
	}
}

func positive(what string, n int, set *int) error {
	if n < 1 {
		return fmt.Errorf("%s %d: must be at least 1", what, n)
	}
	*set = n
	return nil
}

// WithMaxSessions sets how many sessions get an entry of their own in the
// report (default 1000); later sessions are counted everywhere else but
// folded into Report.SessionsFolded (their counts summed in
// Report.FoldedSessions), and keep only the little state the protocol
// checks need.
func WithMaxSessions(n int) Option {
	return func(o *options) error { return positive("max sessions", n, &o.maxSessions) }
}

// WithMaxExamples sets how many examples are kept per violated rule
// (default 3).
func WithMaxExamples(n int) Option {
	return func(o *options) error { return positive("max examples", n, &o.maxExamples) }
}

// WithMaxDistinct bounds the distinct method names, tool names and error
// messages tracked (default 1000 each); further ones are counted as
// "(other)". It keeps a hostile tape from growing the report without end.
func WithMaxDistinct(n int) Option {
	return func(o *options) error { return positive("max distinct", n, &o.maxDistinct) }
}

// WithMaxListed bounds the requests listed as unanswered or answered after
// a cancel (default 20); all are counted.
func WithMaxListed(n int) Option {
	return func(o *options) error { return positive("max listed", n, &o.maxListed) }
}

// WithSessionDetails keeps, for each session with an entry of its own
// (WithMaxSessions), the first n of its error responses, unanswered,
// refused and broken-off requests in SessionReport.Details (mcptape check
// shows them per session), at most MaxSessionDetails of each kind in
// all: a bound on memory that stays small for a tape of any size. Without it (n 0, the
// default) sessions keep none; the report's own lists (ErrorResponses,
// Unanswered.Requests...) are the tape's first ones either way.
func WithSessionDetails(n int) Option {
	return func(o *options) error { return positive("session details", n, &o.sessionDetails) }
}

// MaxSessionDetails bounds the details of each kind (error responses,
// unanswered requests...) all sessions keep together (WithSessionDetails).
const MaxSessionDetails = 10000

// RecommendedGCPercent is the GOGC value mcptape inspect runs with when
// the environment sets none. The inspector's live heap stays small (a few
// MiB), so letting it grow four times before a collection costs little
// memory and saves collections: about a fifth more throughput, measured
// by BenchmarkInspect.
const RecommendedGCPercent = 400

// Other is the name under which names beyond the WithMaxDistinct bound are
// counted.
const Other = "(other)"

// Inspector builds a Report from the items of one tape, fed in order with
// Add. It keeps state for requests in flight, progress tokens in use,
// pending MRTR operations and tasks, plus bounded tables; see the package
// doc. An Inspector is not safe for concurrent use.
type Inspector struct {
	o   options
	rep Report

	tapeClock // offsets count from its origin
	records   int64

	sessions  map[string]*sessionState
	sessSlots [sessionSlots][2]*sessionState // sessions found lately, by sessionSlot, the latest first
	order     []*sessionState
	folded    int
	// foldedTools counts the tools called in the folded sessions, which
	// share it as their sessionState.tools (see Report.FoldedSessions)
	foldedTools map[string]*int64

	inflight    *Pairer[*request]
	tokens      map[string]*request // progress tokens in flight, by tokenKey
	recent      *recentSet          // tokens of requests answered lately
	answeredIDs *recentSet          // ids of requests answered lately, by tokenKey
	// streamIDs holds the raw ids of the client requests seen lately once
	// a sessionless event stream opened (the LangGraph HTTP dialect, whose
	// server copies every message to every stream; nil before): see
	// streamCopy.
	streamIDs *recentSet
	mrtr      waitingOps[*operation] // MRTR operations waiting for a retry (see waitRetry)
	abandoned []RequestRef           // MRTR operations abandoned before the end (waitRetry), the first ones
	tasks     map[string]*operation  // by taskKey (opScope and task id)

	names      map[string]string // interned method and tool names
	hotNames   hot[string, string]
	methods    map[methodKey]*methodStat
	hotMethods hot[methodKey, *methodStat]
	tools      map[string]*toolStat
	hotTools   hot[string, *toolStat]
	errs       map[errKey]*ErrorCount
	viol       *violations

	firstProgress latencyHist
	streams       streamState
	mrtrLat       latencyHist
	taskLat       latencyHist
	unanswered    []RequestRef                // requests superseded by an id reuse
	httpSessions  map[uint64]bool             // recordings (tape.Recording) whose server assigned an Mcp-Session-Id
	exchanges     map[uint64][]exchangeReq    // HTTP exchanges open, with their client requests
	notes         map[uint64][]sentNote       // HTTP exchanges open, with their client notifications
	cuts          map[cutKey]struct{}         // messages announced as recorded cut, not yet seen
	gaps          []int64                     // the record numbers of the gap markers, in order (see lostInGap)
	waits         map[uint64]*handshakeWait   // sessionless exchanges waiting for their client's name
	clients       map[string]*clientHandshake // sessionless clients, by User-Agent
	toolHeaders   map[string][]paramBinding   // x-mcp-header bindings by tool name, from tools/list
	live          io.Writer                   // following a tape: problems are written here as they happen
	liveErr       error                       // the first write error on live
	buf           []byte
	pf            [paramCount]span  // params fields of the current request
	rf            [resultCount]span // result fields of the current response
	free          []*request        // recycled requests
	kept          [detailKinds]int  // details kept by sessions, by kind (keepDetail)
	op            Operation         // the one handed to WithOperations' function
}

// request is what the Inspector keeps about a request in flight.
type request struct {
	sess   *sessionState
	seq    int64
	time   int64
	dir    tape.Direction
	id     rawID
	method string
	name   string // tool or prompt name, or resource URI
	token  string // tokenKey of its progress token, "" when none

	progress      int64
	lastProgress  float64
	chunks        int64 // stream parts received (start, deltas)
	chunkBytes    int64 // their bytes
	firstPart     int64 // time of the first stream part, 0 when none
	cancelled     int64 // time of the cancel, 0 when none
	op            *operation
	wantsTask     bool
	taskPollingOf *operation
	bytes         int64 // of the request frame
	firstProgress int64 // time of the first progress notification, 0 for none
	firstChunk    int64 // HTTP: time of the first message the server sent on its exchange, 0 for none
}

// operation is a logical operation spanning several requests: MRTR rounds
// or a task and its polls.
type operation struct {
	start    int64
	dir      tape.Direction
	method   string
	name     string
	rounds   int64
	terminal int64    // task: time a terminal status was seen
	failed   bool     // task: terminal status failed or cancelled
	task     string   // task: its key in Inspector.tasks
	req      *request // task: the request that created it (its progress token lives on)
	sess     *sessionState

	seq           int64 // MRTR: the first round's request record number, and
	id            rawID // its id
	polls         int64 // task: requests about it
	reqBytes      int64 // bytes of the requests and responses of the rounds done
	respBytes     int64
	firstProgress int64 // time of the first progress notification, 0 for none
	firstChunk    int64 // HTTP: time of the first message on the first round's exchange
}

type opKey struct {
	session string
	dir     tape.Direction
	method  string
	name    string
}

type methodKey struct {
	dir    tape.Direction
	method string
}

type methodStat struct {
	errors int64
	lat    latencyHist
}

type toolStat struct {
	errors, toolErrors int64
	lat                latencyHist
}

type errKey struct {
	code    int64
	message string
}

// NewInspector returns an Inspector for a tape with header h (which may be
// nil).
func NewInspector(h *tape.Header, opts ...Option) (*Inspector, error) {
	o := defaultOptions()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, fmt.Errorf("analysis: option: %w", err)
		}
	}
	in := &Inspector{
		o:           o,
		sessions:    map[string]*sessionState{},
		inflight:    NewPairer[*request](),
		tokens:      map[string]*request{},
		recent:      newRecentSet(o.recent),
		answeredIDs: newRecentSet(o.recent),
		streams:     newStreamState(),
		mrtr:        waitingOps[*operation]{},
		tasks:       map[string]*operation{},
		names:       map[string]string{},
		methods:     map[methodKey]*methodStat{},
		tools:       map[string]*toolStat{},
		errs:        map[errKey]*ErrorCount{},
		viol:        newViolations(o.maxExamples),
		free:        make([]*request, 0, 256),
		exchanges:   map[uint64][]exchangeReq{},
		cuts:        map[cutKey]struct{}{},
		waits:       map[uint64]*handshakeWait{},
		clients:     map[string]*clientHandshake{},
		toolHeaders: map[string][]paramBinding{},
	}
	if h != nil {
		in.rep.Tape = TapeInfo{Format: h.Format, Tool: h.Tool, Version: h.Version, Transport: h.Transport, Target: h.Target}
		in.tapeClock = newTapeClock(h.Time)
	}
	return in, nil
}

// Add feeds the next item of the tape.
func (in *Inspector) Add(it *Item) {
	rec := it.Rec
	if it.Member < 0 { // a batch's members share its record
		in.records++
		in.add(rec)
	}
	if it.IsEvent() {
		in.rep.Tape.Events++
		in.event(it)
		return
	}
	if !it.IsMessage() {
		return
	}
	s := in.session(rec.Session, rec.Time)
	if rec.Exchange != 0 && in.o.onOp != nil && rec.Dir == tape.ServerToClient && rec.Stream != tape.StreamWS {
		in.firstChunk(rec)
	}
	if it.Info.Kind == jsonrpc.KindBatch {
		in.batch(it, s)
		return
	}
	in.rep.Tape.Messages++
	s.messages++
	s.byDir[dirIndex(rec.Dir)]++
	s.byKind[it.Info.Kind]++
	violations := it.Info.Violations
	if in.isCut(rec) {
		in.rep.CutMessages++
		violations = 0 // a cut frame is incomplete, not invalid: the proxy's error says so
	}
	for v := violations; v != 0; v &= v - 1 {
		bit := v & -v
		if bit == jsonrpc.ViolationInvalidJSON {
			in.violation(bit.String(), it, s, "%v", invalidWhy(it.Frame)) // what is wrong, read only when kept
			continue
		}
		in.violation(bit.String(), it, s, "")
	}
	switch it.Info.Kind {
	case jsonrpc.KindRequest:
		in.request(it, s)
	case jsonrpc.KindNotification:
		in.notification(it, s)
	case jsonrpc.KindResponse, jsonrpc.KindError:
		in.response(it, s)
	default:
		s.count(rec.Dir, it.Info.Kind, "")
	}
}

// batch handles the array of a batch frame; its members follow as items.
func (in *Inspector) batch(it *Item, s *sessionState) {
	s.byKind[jsonrpc.KindBatch]++
	if it.Info.Violations.Has(jsonrpc.ViolationEmptyBatch) {
		in.violation(jsonrpc.ViolationEmptyBatch.String(), it, s, "empty")
	}
	if s.version != "" && s.version != "2025-03-26" {
		in.violation(RuleBatchNotAllowed, it, s, "%s on protocol %s", english.Count(it.Batch, "member"), s.version)
	}
}

// violation counts a violation of rule by the message it.
func (in *Inspector) violation(rule string, it *Item, s *sessionState, format string, a ...any) {
	s.violated(rule)
	keepDetail(in, s, violationDetails, func() RuleExample { return RuleExample{rule, in.example(it, format, a...)} })
	if in.live != nil {
		d := describeItem(it)
		if format != "" {
			d += ": " + fmt.Sprintf(format, a...)
		}
		in.flag(it, rule, d)
	}
	in.note(rule, it, format, a...)
}

// note reports what it shows under rule, without counting it as a
// violation of the session nor flagging it when following a tape: for
// info rules (non-standard extensions).
func (in *Inspector) note(rule string, it *Item, format string, a ...any) {
	in.viol.add(rule, func() Example { return in.example(it, format, a...) })
}

// example is the Example of a rule that it shows, described by format
// and a.
func (in *Inspector) example(it *Item, format string, a ...any) Example {
	d := describeItem(it)
	if format != "" {
		d += ": " + fmt.Sprintf(format, a...)
	}
	return Example{Session: it.Rec.Session, Seq: it.Seq, OffsetNS: it.Rec.Time - in.origin, Detail: d}
}

// describeItem names a message briefly: direction, kind, method and id.
func describeItem(it *Item) string {
	if it.IsEvent() {
		return it.Rec.Event + " event"
	}
	d := arrow(string(it.Rec.Dir)) + " " + kindShort[it.Info.Kind]
	if it.Member >= 0 {
		d = fmt.Sprintf("%s (batch member %d/%d)", d, it.Member+1, it.Batch)
	}
	if it.Info.Method != "" {
		d += " " + clip(it.Info.Method, 40)
	}
	if it.Info.ID.Type != jsonrpc.IDAbsent {
		d += " id " + clip(string(it.Info.ID.Raw), 20)
	}
	return d
}

// name interns a method or tool name, up to the distinct-name bound.
func (in *Inspector) name(s string) string {
	if v, ok := in.hotNames.get(s); ok {
		return v
	}
	if v, ok := in.names[s]; ok {
		in.hotNames.put(v, v)
		return v
	}
	if len(in.names) >= in.o.maxDistinct {
		return Other
	}
	in.names[s] = s
	in.hotNames.put(s, s)
	return s
}

// nameBytes interns raw, the inner bytes of a JSON string without escapes.
func (in *Inspector) nameBytes(raw []byte) string {
	if v, ok := getBytes(&in.hotNames, raw); ok { // no allocation for the lookups
		return v
	}
	if v, ok := in.names[string(raw)]; ok {
		in.hotNames.put(v, v)
		return v
	}
	return in.name(string(raw))
}

// Inspect reads the tape at path and returns its report. A file that is
// not a tape is an error wrapping tape.ErrNotTape; a cut or damaged tape
// gives a report of what was readable, with Tape.Warning set.
func Inspect(ctx context.Context, path string, opts ...Option) (*Report, error) {
	return InspectJoined(ctx, path, []string{path}, opts...)
}

// InspectTape reads an opened tape to its end and returns its report
// (File left empty). The caller closes r.
func InspectTape(ctx context.Context, r *tape.Reader, opts ...Option) (*Report, error) {
	in, err := NewInspector(r.Header(), opts...)
	if err != nil {
		return nil, err
	}
	// Frames are decompressed on other cores while this goroutine's
	// Scanner parses and classifies records and the Inspector takes them.
	if err := r.DecodeAhead(decodeWorkers()); err != nil {
		return nil, err
	}
	sc, err := NewScanner(ctx, r, sharedFrames()) // the Inspector copies what it keeps
	if err != nil {
		return nil, err
	}
	defer sc.Close()
	for {
		it, err := sc.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, err
		}
		in.Add(it)
	}
	return in.Finish(sc.Warning()), nil
}

// decodeWorkers is how many goroutines decompress frames for Inspect: the
// cores left once the Scanner's and the Inspector's goroutines have one
// each, at least one (it still overlaps decompression with the rest), at
// most four.
func decodeWorkers() int { return min(max(runtime.GOMAXPROCS(0)-2, 1), 4) }

// rawID keeps a request id's raw JSON without allocating when it is short.
// An integer id is kept as its value (setInt), so that the Inspector need
// not read the id's bytes out of the frame, which has left the cache by
// the time a record reaches it (see fieldSet).
type rawID struct {
	short [24]byte
	n     uint8
	isInt bool
	num   int64
	long  string
}

func (r *rawID) set(raw []byte) {
	r.isInt = false
	if len(raw) <= len(r.short) {
		r.n = uint8(copy(r.short[:], raw))
		r.long = ""
		return
	}
	r.n, r.long = 0, string(raw)
}

// setInt keeps the integer id n, whose raw JSON is rawLen bytes long, as
// its value when formatting it gives those bytes back (a valid JSON
// integer has no leading zeros; "-0" is the one that does not come back),
// and reports whether it did.
func (r *rawID) setInt(n int64, rawLen int) bool {
	l := 1
	if n < 0 {
		l++
	}
	for v := n; v >= 10 || v <= -10; v /= 10 {
		l++
	}
	if l != rawLen {
		return false
	}
	r.isInt, r.num, r.n, r.long = true, n, 0, ""
	return true
}

func (r *rawID) String() string {
	if r.isInt {
		return strconv.FormatInt(r.num, 10)
	}
	if r.long != "" {
		return r.long
	}
	return string(r.short[:r.n])
}

// jsonrpcID returns the id as a jsonrpc.ID (Raw a copy), for a Pairer;
// ok is false for none (a request made up for an operation).
func (r *rawID) jsonrpcID() (id jsonrpc.ID, ok bool) {
	raw := r.String()
	if raw == "" {
		return id, false
	}
	id.Raw, id.Type = []byte(raw), jsonrpc.IDNumber
	if raw[0] == '"' {
		id.Type = jsonrpc.IDString
	}
	return id, true
}

// flag writes a problem as it happens, when following a tape.
func (in *Inspector) flag(it *Item, what, detail string) {
	if in.live == nil || in.liveErr != nil {
		return
	}
	_, in.liveErr = fmt.Fprintf(in.live, "!! %s [%s] %s: %s\n", offset(it.Rec.Time-in.origin), clip(it.Rec.Session, 12), what, clip(detail, 160))
}
