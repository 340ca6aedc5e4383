package analysis

// Report is what Inspect learned about one tape; mcptape inspect --format
// json writes it as is. Times are Unix nanoseconds (fields ending in _ns
// that are not offsets or durations); offsets are nanoseconds since
// Tape.OriginNS; durations and latencies are nanoseconds. Lists are sorted
// so that the same tape always gives the same report.
type Report struct {
	File     string          `json:"file"`
	Tape     TapeInfo        `json:"tape"`
	Problems []Problem       `json:"problems"`
	Sessions []SessionReport `json:"sessions"`
	// SessionsFolded counts sessions beyond the listing limit: their
	// messages are counted everywhere but they have no entry of their own.
	SessionsFolded int `json:"sessions_folded,omitempty"`
	// FoldedSessions sums those sessions as one entry (nil when there are
	// none), for a verdict on the whole tape: ID empty; its counts, by
	// kind, direction and tool, its violations by rule, summed; FirstNS and
	// LastNS span them all, DurationNS is the longest one's, MaxLatencyNS
	// and Slowest the slowest request's, ProtocolVersion the oldest
	// negotiated; no peers, exit, details, stderr lines or counts by
	// method.
	FoldedSessions *SessionReport `json:"folded_sessions,omitempty"`
	Latency        []LatencyStats `json:"latency"`
	Tools          []ToolStats    `json:"tools"`
	Errors         []ErrorCount   `json:"errors"`
	// ErrorResponses lists the first JSON-RPC error responses, by record:
	// which request each answered, its code and message.
	ErrorResponses []ErrorResponse `json:"error_responses,omitempty"`
	Unanswered     UnansweredStats `json:"unanswered"`
	// Refused counts HTTP requests the server refused with an HTTP error
	// status (4xx, 5xx) and no JSON-RPC answer: answered, by the status.
	Refused       RefusedStats   `json:"refused,omitzero"`
	Cancellations CancelStats    `json:"cancellations"`
	Progress      ProgressStats  `json:"progress"`
	Operations    OperationStats `json:"operations"`
	// Streams describes answers streamed as several results under one id
	// (a non-standard extension); absent when the tape has none.
	Streams      *StreamStats     `json:"streams,omitempty"`
	Violations   []ViolationStats `json:"violations"`
	ProxyErrors  []Example        `json:"proxy_errors,omitempty"`
	ProxyErrorsN int64            `json:"proxy_errors_count,omitempty"`
	// RefusedUpgrades lists the first WebSocket upgrades the server
	// refused with an HTTP error status (no session came of them), and
	// RefusedUpgradesN counts them.
	RefusedUpgrades  []Example `json:"refused_upgrades,omitempty"`
	RefusedUpgradesN int64     `json:"refused_upgrades_count,omitempty"`
	// CutMessages counts the messages the HTTP recorder announced as
	// recorded cut (forwarded whole): they are not checked against
	// JSON-RPC, and the proxy error that announced each is listed.
	CutMessages int64 `json:"cut_messages,omitempty"`
	// UnrecordedMessages counts the messages the recorder refused and did
	// not record: a WebSocket message over its limit, which ended the
	// session (status 1009); each is listed as a proxy error.
	UnrecordedMessages int64 `json:"unrecorded_messages,omitempty"`
}

// TapeInfo describes the tape as a whole.
type TapeInfo struct {
	Format    int    `json:"format"`
	Tool      string `json:"tool"`
	Version   string `json:"version"`
	Transport string `json:"transport"`
	Target    string `json:"target,omitempty"`
	// OriginNS is the zero of every offset: the header's start time, or
	// the first record's when the header has none.
	OriginNS int64 `json:"origin_ns"`
	// FirstNS and LastNS are the times of the first and last records.
	FirstNS    int64 `json:"first_ns"`
	LastNS     int64 `json:"last_ns"`
	DurationNS int64 `json:"duration_ns"`
	Records    int64 `json:"records"`
	Messages   int64 `json:"messages"`
	Events     int64 `json:"events"`
	// Warning says where a cut or damaged tape stopped being readable; the
	// report covers the records before it.
	Warning string `json:"warning,omitempty"`
	// Late counts the records the tape writer wrote with a later time
	// than their own (handed to it after a newer record was written: their
	// time was moved, by LateMaxNS at most), Reordered those it moved to
	// their place in time order (their time kept): from the tape's "stats"
	// event, summed over the tapes read as one.
	Late      int64 `json:"late,omitempty"`
	LateMaxNS int64 `json:"late_max_ns,omitempty"`
	Reordered int64 `json:"reordered,omitempty"`
	// Gaps counts the places where records are missing though the tape
	// reads on: the gap markers ("error" events with a "gap") of a writer
	// that lost records to a write error, and of a joined read past a
	// damaged or missing tape of a rotated recording.
	Gaps int64 `json:"gaps,omitempty"`
	// ClockSteps counts the answers stamped before the request they answer
	// (the recorder's clock stepped back between them): their latency is
	// unknown, left out of every latency distribution (Latency.Unknown)
	// and null in the requests table; ClockStepExamples lists the first
	// ones (Seq: the answer's record, Detail: its request's).
	ClockSteps        int64     `json:"clock_steps,omitempty"`
	ClockStepExamples []Example `json:"clock_step_examples,omitempty"`
}

// Problem is one line of the report's problem list, worst first.
type Problem struct {
	Severity Severity `json:"severity"`
	// What is a stable name: a rule name, or one of "tape-damaged",
	// "unanswered", "error-response", "tool-error", "answered-after-cancel",
	// "server-exit", "proxy-error", "mrtr-abandoned", "task-unfinished",
	// "stream-unfinished", "ws-refused", "cut-by-shutdown", "broken-off",
	// "client-gone", "lost-in-gap", "clock-step".
	What    string   `json:"what"`
	Count   int64    `json:"count"`
	Summary string   `json:"summary"`
	Details []string `json:"details,omitempty"`
}

// Peer names a client or a server as it introduced itself.
type Peer struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
}

// SessionReport describes one session.
type SessionReport struct {
	ID         string `json:"id"`
	FirstNS    int64  `json:"first_ns"`
	LastNS     int64  `json:"last_ns"`
	DurationNS int64  `json:"duration_ns"`
	Client     *Peer  `json:"client,omitempty"`
	Server     *Peer  `json:"server,omitempty"`
	// ProtocolVersion is the negotiated version: the initialize result's,
	// or for 2026-07-28 sessions the one in the requests' _meta.
	ProtocolVersion string `json:"protocol_version,omitempty"`
	// RequestedVersion is the version the client asked for in initialize.
	RequestedVersion string `json:"requested_version,omitempty"`
	Messages         int64  `json:"messages"`
	// ByKind and ByDir count messages (batch members included, the batch
	// arrays themselves counted under "batch").
	ByKind   map[string]int64 `json:"by_kind"`
	ByDir    map[string]int64 `json:"by_dir"`
	ByMethod []MethodCount    `json:"by_method"`
	// ToolsCalled counts tools/call requests by tool name.
	ToolsCalled []NameCount `json:"tools_called,omitempty"`
	Stderr      *StderrInfo `json:"stderr,omitempty"`
	Exit        *ExitInfo   `json:"exit,omitempty"`
	ClosedBy    string      `json:"closed_by,omitempty"`
	Violations  int64       `json:"violations"`
	// ViolationRules counts Violations by rule, most first.
	ViolationRules []NameCount `json:"violation_rules,omitempty"`
	Unanswered     int64       `json:"unanswered"`
	Errors         int64       `json:"errors"`
	// Refused counts the requests the server refused with an HTTP error
	// status other than 401, BrokenOff those whose response it broke off
	// (UnansweredStats.BrokenOff), of this session.
	Refused   int64 `json:"refused,omitempty"`
	BrokenOff int64 `json:"broken_off,omitempty"`
	// RefusedNotifications counts the notifications the client sent on
	// an HTTP exchange that the server refused with an HTTP error status
	// other than 401 (RefusedStats.Notifications), of this session.
	RefusedNotifications int64 `json:"refused_notifications,omitempty"`
	// Details lists the first requests of the session that went wrong,
	// when asked for (WithSessionDetails).
	Details *SessionDetails `json:"details,omitempty"`
	// ToolErrors counts tool results with isError, Cancelled the requests
	// cancelled, of this session.
	ToolErrors int64 `json:"tool_errors,omitempty"`
	Cancelled  int64 `json:"cancelled,omitempty"`
	// MaxLatencyNS is the latency of the slowest client request answered
	// (a whole MRTR or task operation counts as one), Slowest its method
	// ("tools/call NAME" for a tool).
	MaxLatencyNS int64  `json:"max_latency_ns,omitempty"`
	Slowest      string `json:"slowest,omitempty"`
	// Abandoned counts the session's MRTR operations whose last answer
	// asked for input and were never retried, Unfinished its tasks with
	// no terminal status or result seen (MRTRStats.Abandoned,
	// TaskStats.Unfinished: a task id is the session's own).
	Abandoned  int64 `json:"abandoned,omitempty"`
	Unfinished int64 `json:"unfinished,omitempty"`
}

// SessionDetails lists the first requests of a session that went wrong,
// by record (WithSessionDetails): the error responses, the requests never
// answered, refused with an HTTP error status other than 401 (and the
// notifications so refused: their ID is ""), those whose response the
// server broke off, the MRTR operations abandoned (their first round's
// request), the tasks never finished (the request that created them) and
// the protocol violations (examples of the session's own, whatever the
// tape's few examples per rule, Report.Violations, show).
type SessionDetails struct {
	ErrorResponses []ErrorResponse `json:"error_responses,omitempty"`
	Unanswered     []RequestRef    `json:"unanswered,omitempty"`
	Refused        []RequestRef    `json:"refused,omitempty"`
	BrokenOff      []RequestRef    `json:"broken_off,omitempty"`
	Abandoned      []RequestRef    `json:"abandoned,omitempty"`
	Unfinished     []RequestRef    `json:"unfinished,omitempty"`
	Violations     []RuleExample   `json:"violations,omitempty"`
}

// RuleExample is an example of a violation of Rule.
type RuleExample struct {
	Rule string `json:"rule"`
	Example
}

// MethodCount counts messages of one method, direction and kind; responses
// count under the method of their request ("" when unpaired).
type MethodCount struct {
	Dir    string `json:"dir"`
	Kind   string `json:"kind"`
	Method string `json:"method"`
	Count  int64  `json:"count"`
}

// NameCount is a name with a count.
type NameCount struct {
	Name  string `json:"name"`
	Count int64  `json:"count"`
}

// StderrInfo summarises the server's stderr lines.
type StderrInfo struct {
	Lines int64    `json:"lines"`
	Last  []string `json:"last"` // the last few lines, oldest first
}

// ExitInfo is the server process's end.
type ExitInfo struct {
	Code   int    `json:"code"`
	Signal string `json:"signal,omitempty"`
}

// Latency summarises a latency distribution (nanoseconds). Mean and Max
// are exact; percentiles come from an HDR histogram with two significant
// digits (within 1%).
type Latency struct {
	// Count is the number of durations in the distribution; Unknown those
	// left out because their end was stamped before their start (the
	// recorder's clock stepped back: see TapeStats.ClockSteps), not 0.
	Count   int64 `json:"count"`
	Unknown int64 `json:"unknown,omitempty"`
	MeanNS  int64 `json:"mean_ns"`
	P50NS   int64 `json:"p50_ns"`
	P90NS   int64 `json:"p90_ns"`
	P99NS   int64 `json:"p99_ns"`
	MaxNS   int64 `json:"max_ns"`
}

// LatencyStats is the latency of one method in one direction: requests
// paired with their responses; MRTR rounds and task polls joined into one
// operation (see Operations).
type LatencyStats struct {
	Dir    string `json:"dir"`
	Method string `json:"method"`
	// Errors counts JSON-RPC error responses among Count.
	Errors int64 `json:"errors"`
	Latency
}

// ToolStats is the latency and outcome of the calls of one tool.
type ToolStats struct {
	Name string `json:"name"`
	// Calls counts the tools/call operations answered; Errors the JSON-RPC
	// errors and ToolErrors the results with isError among them.
	Calls      int64 `json:"calls"`
	Errors     int64 `json:"errors"`
	ToolErrors int64 `json:"tool_errors"`
	Latency
}

// ErrorCount counts error responses with one code and message. Beyond the
// distinct-name bound, the rest are counted together with code 0 and
// message "(other)".
type ErrorCount struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
	Count   int64  `json:"count"`
	// Method is the method of the first request answered with this error.
	Method string `json:"method,omitempty"`
}

// ErrorResponse is one JSON-RPC error response: the request it answered
// (Method and Name empty, Seq the response's record, when it pairs with
// none), the response's record, its code and message.
type ErrorResponse struct {
	RequestRef
	Response int64  `json:"response_record"`
	Code     int64  `json:"code"`
	Message  string `json:"message"`
}

// RequestRef points at a request.
type RequestRef struct {
	Session  string `json:"session"`
	Dir      string `json:"dir"`
	ID       string `json:"id"` // raw JSON
	Method   string `json:"method"`
	Name     string `json:"name,omitempty"` // tool, prompt or resource
	Seq      int64  `json:"record"`
	OffsetNS int64  `json:"offset_ns"`
	// Status is the HTTP status that answered a refused request, or of
	// the response that had started on the exchange of a request cut by
	// the recorder's shutdown or broken off (0: no response).
	Status int `json:"status,omitempty"`
}

// RefusedStats counts requests refused at the HTTP level: a 403 from
// DNS-rebinding protection, a 401 asking for OAuth, a 404 for an unknown
// session.
type RefusedStats struct {
	Count int64 `json:"count"`
	// Unauthorized counts those refused with 401, the start of an OAuth
	// flow: an info, not a warning.
	Unauthorized int64        `json:"unauthorized"`
	Requests     []RequestRef `json:"requests,omitempty"` // the first ones, by record
	// Notifications counts the notifications the client sent on an HTTP
	// exchange that the server refused with an HTTP error status other
	// than 401 (a batch of notifications where the protocol version has
	// no batches gets a 400): the server did not take them. They are not
	// in Count. NotificationRefs lists the first ones (ID "").
	Notifications    int64        `json:"notifications,omitempty"`
	NotificationRefs []RequestRef `json:"notification_refs,omitempty"`
}

// UnansweredStats counts requests that got no response before the tape
// ended. Cancelled ones are counted apart: a cancelled request need not be
// answered.
type UnansweredStats struct {
	Count     int64        `json:"count"`
	Cancelled int64        `json:"cancelled"`
	Requests  []RequestRef `json:"requests"` // the first ones, by record
	// CutByShutdown counts the requests whose HTTP exchange the
	// recorder's own shutdown cut before the server answered (its "end"
	// event says so: tape.ShutdownCutError before any response,
	// tape.ShutdownCutResponseError after the response had started, whose
	// status the request's RequestRef.Status gives), or that were in
	// flight when the recorder stopped (their session's "close" says so):
	// by the recorder's doing, not the server's. They are not in Count.
	CutByShutdown         int64        `json:"cut_by_shutdown,omitempty"`
	CutByShutdownRequests []RequestRef `json:"cut_by_shutdown_requests,omitempty"` // the first ones
	// BrokenOff counts the requests whose HTTP exchange the server ended
	// with its response broken off (the body failed mid-way: a reset, an
	// unexpected EOF) before answering them, or that were in flight when
	// the server ended their session (its WebSocket connection lost or
	// closed by the server, an HTTP session it answered 404 for, a legacy
	// SSE stream it ended, a stdio server that exited by itself): the
	// server's doing, listed apart
	// from Count (never answered at all) but as an error too.
	BrokenOff         int64        `json:"broken_off,omitempty"`
	BrokenOffRequests []RequestRef `json:"broken_off_requests,omitempty"` // the first ones
	// ClientGone counts the requests in flight when the client ended the
	// session, left unanswered: a stdio client closed its input (the
	// server then exited, by itself or ended by the recorder after its
	// grace period), an HTTP client deleted the session or closed its
	// legacy SSE stream, a WebSocket client closed or lost its connection.
	// The client left before the answer, not the server's doing. They are
	// not in Count.
	ClientGone         int64        `json:"client_gone,omitempty"`
	ClientGoneRequests []RequestRef `json:"client_gone_requests,omitempty"` // the first ones
	// ServerRequests counts, of the requests counted here (Count,
	// Cancelled, CutByShutdown, BrokenOff, ClientGone, LostInGap), those
	// the server sent (the client left them unanswered): the rest are the
	// client's.
	ServerRequests int64 `json:"server_requests,omitempty"`
	// LostInGap counts the requests still in flight at the end whose
	// answer is unknown: records are missing after them (Tape.Gaps: a
	// tape of a rotated recording missing or damaged, records the
	// recorder lost to a write error), before their session's close, and
	// the answer may be among them. They are not in Count.
	LostInGap         int64        `json:"lost_in_gap,omitempty"`
	LostInGapRequests []RequestRef `json:"lost_in_gap_requests,omitempty"` // the first ones
}

// CancelStats counts cancellations and what followed.
type CancelStats struct {
	// Count counts the requests cancelled (by notifications/cancelled or,
	// over HTTP, by closing the response stream; a request cancelled twice
	// counts once) plus the cancels naming no request in flight.
	Count int64 `json:"count"`
	// AnsweredAnyway counts cancelled requests answered after the cancel.
	AnsweredAnyway int64 `json:"answered_anyway"`
	// NotAnswered counts cancelled requests never answered (as the
	// protocol asks).
	NotAnswered int64 `json:"not_answered"`
	// UnknownTarget counts cancels naming no request in flight: the
	// response crossed the cancel, or the id is wrong.
	UnknownTarget int64 `json:"unknown_target"`
	// StreamClosed counts requests cancelled over HTTP by the client
	// closing the response stream before the response (the 2026-07-28
	// way, which SDKs use on older versions too). They count in Count.
	StreamClosed int64        `json:"stream_closed"`
	Answered     []RequestRef `json:"answered,omitempty"`
}

// ProgressStats summarises progress notifications.
type ProgressStats struct {
	// Requested counts requests that carried a progress token; Streams
	// those that received at least one notification.
	Requested     int64 `json:"requested"`
	Streams       int64 `json:"streams"`
	Notifications int64 `json:"notifications"`
	// MaxPerRequest is the most notifications one request received.
	MaxPerRequest int64 `json:"max_per_request"`
	// FirstProgress is the time from a request to its first progress
	// notification.
	FirstProgress Latency `json:"first_progress"`
	NotIncreasing int64   `json:"not_increasing"`
	AfterResponse int64   `json:"after_response"`
	UnknownToken  int64   `json:"unknown_token"`
}

// OperationStats summarises logical operations made of several requests.
type OperationStats struct {
	MRTR  MRTRStats `json:"mrtr"`
	Tasks TaskStats `json:"tasks"`
}

// MRTRStats counts multi round-trip requests (2026-07-28): a request
// answered with resultType "input_required", retried with a new id.
type MRTRStats struct {
	// Operations counts the completed ones; Rounds their requests.
	Operations int64 `json:"operations"`
	Rounds     int64 `json:"rounds"`
	MaxRounds  int64 `json:"max_rounds"`
	// Abandoned counts operations whose last answer asked for input and
	// that were never retried.
	Abandoned int64 `json:"abandoned"`
	// AbandonedRequests are the first of them (their first round's
	// request), by record.
	AbandonedRequests []RequestRef `json:"abandoned_requests,omitempty"`
	Latency           Latency      `json:"latency"`
}

// TaskStats counts task-augmented requests and their polling.
type TaskStats struct {
	Tasks     int64 `json:"tasks"`
	Polls     int64 `json:"polls"` // tasks/get and tasks/result requests
	Completed int64 `json:"completed"`
	// Unfinished counts tasks with no terminal status or result seen.
	Unfinished int64 `json:"unfinished"`
	// UnfinishedRequests are the first of them (the request that created
	// each), by record.
	UnfinishedRequests []RequestRef `json:"unfinished_requests,omitempty"`
	Latency            Latency      `json:"latency"`
}
