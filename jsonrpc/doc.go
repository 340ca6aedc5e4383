// Package jsonrpc classifies, splits and rewrites MCP JSON-RPC 2.0 frames
// without decoding them.
//
// A frame is one complete JSON text as it crossed the wire: a stdio line, an
// HTTP body, or the data field of an SSE event. The capture proxy, the
// replayer and the load generator see every frame, so the functions here are
// built for that hot path: they never copy the frame, never build a generic
// tree, and do not allocate for ordinary MCP traffic.
//
// # Data flow
//
// A transport hands a frame to [Classify], which makes one validating pass
// over it. The pass reads the keys of the top-level object and skips every
// other value while still checking it is valid JSON (strings with their
// escapes, numbers, literals, nesting). It descends only into `params` (for
// `_meta.progressToken`, `progressToken` and `requestId`) and into `error`
// (for `code` and `message`). The result, an [Info], carries the [Kind], the
// raw id with its JSON type and byte offsets, the method name, the error
// code, the progress token, the target of a `notifications/cancelled`, and a
// [Violation] bit set of protocol rules the frame breaks.
//
// [ClassifyMembers] makes the same pass and also lists the members of the
// message's params (request, notification) or result (response) as spans
// of the frame, for readers that look at a few of them (offline analysis)
// and would otherwise walk the frame a second time.
//
// A top-level array is a batch: Classify validates it and counts its members;
// [Split] (or the allocation-free [AppendSplit]) returns the members as
// sub-slices of the frame, each of which can then be classified.
//
// A response may also be one part of an answer streamed as several results
// under one id (start, deltas, a terminal end). [StreamPart] is that general
// mechanism; a [StreamDialect] (such as [LangGraphStream], the
// content_start/content_delta/content_end results of the LangGraph MCP
// server's docs) says which result members mark the parts, from the members
// [ClassifyMembers] lists. Classify itself is unchanged: callers that do not
// look for streams pay nothing.
//
// [RewriteID], [RewriteProgressToken] and [RewriteCancelTarget] return a new
// frame in which exactly one value's bytes are replaced, every other byte
// kept; [AppendRewrite] does the same into a caller's buffer, and [Replace]
// is the splice underneath.
//
// # Decisions where the protocol text is silent
//
//   - Whitespace: JSON whitespace (space, tab, CR, LF) is allowed around the
//     value, so a trailing "\r" from a CRLF line is fine. A byte order mark is
//     not JSON and makes the frame invalid, as in encoding/json.
//   - Validity follows encoding/json: a frame Classify accepts is accepted by
//     json.Valid and the other way round, including its nesting limit of
//     10000 arrays and objects. Strings are not required to be valid UTF-8
//     (encoding/json does not require it either); a string that is not valid
//     UTF-8 sets [ViolationInvalidUTF8] but leaves the kind alone.
//   - Keys are matched after unescaping, so "meth\u006fd" is the method key,
//     and they are matched case-sensitively (JSON-RPC member names are; note
//     that encoding/json struct decoding would also accept "Method").
//   - Duplicate keys: the last one wins, as with encoding/json. All reported
//     values and offsets refer to the last occurrence; an earlier `params`
//     or `error` is forgotten entirely when a later one appears.
//   - Kind: a message with `method` is a request when it also has `id`
//     (whatever the id's type, null included, with the matching violation)
//     and a notification otherwise, even when `method` is not a string
//     ([ViolationBadMethod]) or `result`/`error` are present too
//     ([ViolationMethodWithResult]). Without `method`, `error` makes an
//     error response (also when `result` is present too:
//     [ViolationResultAndError]) and `result` a response. An object with an
//     id and none of method/result/error is [KindInvalid] with
//     [ViolationNoResultOrError]; an object with none of the four is
//     KindInvalid with [ViolationNotMessage].
//   - Ids: a request id must be a string or an integer. null sets
//     [ViolationNullRequestID]; an object, array or boolean sets
//     [ViolationBadIDType]; a number with a fraction or exponent sets
//     [ViolationNonIntegerID]. An error response may have an absent or null
//     id (the request could not be parsed); a success response may not
//     ([ViolationResultWithoutID]).
//   - Error codes: `code` must be written as a plain integer that fits in an
//     int64: -32601 and -0 (read as 0) are accepted; 1.5, 1e3, 1.0, "x" and
//     a missing code set [ViolationBadErrorCode]. 1e3 is refused because
//     JSON-RPC asks for an integer and strict decoders (Go's int64
//     unmarshalling among them) reject exponent forms. `message` must be
//     present and a string, else [ViolationMissingErrorMessage].
//   - Progress tokens and cancel targets: for a request the token is
//     params._meta.progressToken; for notifications/progress it is
//     params.progressToken, which is then required. A cancel target is
//     params.requestId of notifications/cancelled; it may be absent (the
//     2025-11-25 schema made it optional) but when present must be a string
//     or an integer. Other messages report neither.
//   - `params`, when present on a request or notification, must be an object
//     or an array ([ViolationBadParams]).
//
// Method names of every released MCP version (2024-11-05 to 2026-07-28) are
// interned: classifying a frame whose method is one of them does not
// allocate. Any other method costs one allocation for its string.
package jsonrpc
