// Package tape reads and writes mcptape capture files ("tapes").
//
// A tape is a zstd stream of newline-delimited JSON records, written as a
// sequence of independent zstd frames so that a process killed at any moment
// leaves a file whose complete frames all read back. The first record is a
// Header; every later record is a Message (one framed JSON-RPC message,
// byte-exact) or an Event (session open/close, HTTP exchange metadata,
// stderr lines, exit status, errors, writer statistics).
//
// Data flows one way: a capture proxy hands Records to a Writer, which
// encodes each at once into a batch held in bounded memory, and compresses
// and writes the batches on its own goroutine; a Reader streams them back,
// tolerating a cut or corrupt tail. The format is specified in
// docs/tape-format.md.
//
// # Time order, in one place
//
// Records come out of a Reader in time order, and this package is the one
// place that makes it so; its readers (analysis, replay, mock, the
// commands) reorder nothing. The choice: the Writer, which every recorder
// (stdio, HTTP, WebSocket) writes through, writes records in
// non-decreasing time and says so in the header (Header.TimeOrdered), so
// that a Reader of such a tape reads the file in order at no cost, and a
// live tail sees time order too. The recorders stamp a message before
// they forward it, so time order puts a request before its response. The
// Writer keeps the batch it fills sorted, holds the records of the last
// flush interval for the next batch at a cut, and moves the time of a
// record handed over later than that forward to the newest time cut,
// counted (writer_order.go). Only tapes written before that, without
// TimeOrdered, are reordered, by the Reader, within ReorderWindow
// (order.go). Ordering in the Writer rather than in the Reader costs the
// analysis of new tapes nothing (a reordering stage in the Reader cost
// inspect 15 % more CPU): the Writer moves into place about one record in
// a hundred of a busy HTTP recording, once, where a reordering Reader
// handles every record of every reading.
package tape

import "encoding/json"

// FormatVersion is the version of the tape format written by this package.
const FormatVersion = 1

// ToolName is the header's Tool of the tapes mcptape writes: the Writer
// sets it when the header names no tool.
const ToolName = "mcptape"

// Type tells what a record is.
type Type string

// Record types.
const (
	TypeHeader  Type = "header"
	TypeMessage Type = "message"
	TypeEvent   Type = "event"
)

// Direction tells which way a message travelled.
type Direction string

// Directions. Events that belong to no direction leave it empty.
const (
	ClientToServer Direction = "c2s"
	ServerToClient Direction = "s2c"
)

// Event names used in Event records. The payload of each is defined by the
// recorder that writes it; docs/tape-format.md lists them all.
const (
	EventOpen   = "open"   // a session began (stdio: {"pid", "command"}; HTTP: {"kind", "how", "conn"})
	EventClose  = "close"  // a session ended (stdio: {"by": reason}; HTTP: {"by": party, "reason"})
	EventHTTP   = "http"   // one HTTP exchange, twice: {"phase": "response"|"end", "method", "path", "status", ...}
	EventSSE    = "sse"    // HTTP: an SSE event without a message, or a message event's extra fields ({"kind", ...})
	EventStderr = "stderr" // one line the server wrote to stderr ({"line": "..."} or {"b64": "..."})
	EventExit   = "exit"   // the server process ended ({"code": N, "signal": "...", "sent": [...]})
	EventError  = "error"  // a proxy-side problem: a frame recorded cut or invalid, an upstream failure... ({"error": "...", ...})
	EventStats  = "stats"  // writer statistics, written by Close (StatsData)
)

// ShutdownCutError is the "error" of an HTTP exchange's "end" event (with
// no status and closed_by "proxy") when the recorder's own shutdown cut
// the exchange before the upstream answered: the client got no response,
// by the proxy's doing, not the server's.
const ShutdownCutError = "cut by the proxy's shutdown before the upstream answered: the client got no response"

// ShutdownCutResponseError is the "error" of an HTTP exchange's "end"
// event (with the response's status and closed_by "proxy") when the
// recorder's own shutdown cut the exchange after the upstream's response
// had started: the client got the response head and what was forwarded
// before the cut, by the proxy's doing, not the server's.
const ShutdownCutResponseError = "cancelled by the proxy's shutdown"

// Header is the first record of every tape.
type Header struct {
	Format    int      `json:"format"`            // FormatVersion
	Tool      string   `json:"tool"`              // ToolName for mcptape's tapes
	Version   string   `json:"version"`           // tool version
	Time      int64    `json:"time"`              // start, Unix nanoseconds
	Transport string   `json:"transport"`         // "stdio", "http", "sse", ...
	Target    string   `json:"target,omitempty"`  // command line or upstream URL
	Argv      []string `json:"argv,omitempty"`    // mcptape's own argv, secrets redacted
	Host      string   `json:"host,omitempty"`    // hostname of the recorder
	Segment   *Segment `json:"segment,omitempty"` // set when the recording is rotated over several tapes
	// TimeOrdered says that the records come in non-decreasing time (the
	// Writer sets it: every tape it writes is). A Reader of a tape
	// without it (written before it existed) puts the records in time
	// order itself, within ReorderWindow.
	TimeOrdered bool            `json:"time_ordered,omitempty"`
	Extra       json.RawMessage `json:"extra,omitempty"` // anything else the recorder wants kept
}

// Segment places a tape in a rotated recording (see Rotator): every tape of
// one recording shares its Series, and Seq numbers them from 1. A session
// open at a rotation continues in the next segment under the same id.
type Segment struct {
	Series string `json:"series"` // random id of the recording (one proxy run)
	Seq    int    `json:"seq"`    // 1, 2, ... in writing order
}

// Record is one line of a tape.
//
// For a Message, Frame holds exactly the bytes that crossed the wire (for
// stdio: the line without its trailing "\n"; NoEOL is set when the line had
// no newline at all). For an Event, Event names it and Data holds its JSON
// payload. Records returned by a Reader own their slices.
type Record struct {
	Type     Type
	Time     int64           // Unix nanoseconds
	Session  string          // session the record belongs to ("" when none yet)
	Dir      Direction       // for messages; optional for events
	Frame    []byte          // message bytes, exact
	NoEOL    bool            // stdio: the frame was not terminated by a newline
	Exchange uint64          // HTTP: number of the exchange the record belongs to (0: none)
	Stream   string          // HTTP: "post", "get", "sse" ... which stream carried it
	EventID  string          // SSE event id, when the message came in an SSE event
	Event    string          // for events: one of the Event* names
	Data     json.RawMessage // for events: payload; nil when none
	Header   *Header         // for the header record
	// DataValid says that Data is known to be one valid JSON value, in
	// valid UTF-8, with no line break and no white space around it (it
	// came from an encoder of the caller's own, tested against
	// encoding/json): Write then stores it without checking it again. A
	// caller that sets it for anything else corrupts the tape.
	DataValid bool
}
