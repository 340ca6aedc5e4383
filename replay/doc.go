// Package replay re-sends recorded MCP sessions to a live server and
// compares the live answers with the recorded ones. The replay is faithful:
// what the recorded client sent is sent again, mistakes included, and only
// the identifiers that must be fresh in the live session are rewritten
// (see Rewriting); every other deviation is an option (WithUnbatch).
//
// # Data flow
//
// [Load] reads a tape and cuts it into [Session] values: the client-to-server
// frames of one recorded session (the [Step] list, batches split into their
// members, which keep their batch, as do the client messages of one HTTP
// POST, written one record each by the recorder; frames that are not
// JSON-RPC messages are steps too) and the server-to-client messages they
// are compared with (server frames that are not messages are skipped and
// counted in Session.Invalid: as many live ones are let through, not
// compared). Each
// step names its causal dependencies: the last server message (a response
// or a server request) that had arrived before it was sent and, for the
// client's answer to a server request, that request. Records are taken in
// the time order the tape.Reader gives (the one place that orders them).
//
// [Open] does the same for a tape file, but keeps the sessions in memory
// only when the tape is small ([DefaultMemory]); otherwise it keeps their
// metadata, and each replay of a session reads its records again from the
// file as it goes, at most a thousand steps ahead of what it sends. A
// runner forgets a request a thousand steps after its answer was
// compared: the memory of a replay is bounded by the sessions replayed at
// once and what they have in flight, not by the tape.
//
// [Run] replays sessions, each over its own connection made by a
// [DialFunc]. Per session, one goroutine sends the steps in order: a step
// waits until the live equivalents of its dependencies have arrived and its
// recorded spacing (scaled by the speed) has elapsed, is rewritten, and is
// sent. Another goroutine receives every live frame: it pairs responses
// with their recorded twins through the id map, matches the server's own
// requests with the recorded ones (by method and order within the related
// request) so that the recorded answer is sent under the live id, and
// answers unmatched server requests with the fallbacks of the protocol
// (elicitation declined, sampling error -1, roots -32601, ping {}).
//
// A tape written in time order (Header.TimeOrdered) has every answer after
// the message it answers: its recorders stamp a message before forwarding
// it. On an older tape an answer may be stamped just before the message it
// answers; for those only, Load looks ahead (tape.ReorderWindow) and moves
// such an answer right after the message it answers.
//
// Over HTTP a request is sent on its own goroutine, because Send returns
// only with the response headers, which some servers hold back until the
// answer is ready while the recorded client went on. The exceptions keep
// the server's view in the recorded order, whatever the recorded client's
// transport: initialize is sent synchronously (nothing goes before its
// answer brings the session id), and so are notifications and responses,
// each acknowledged (202) before any message recorded after it is sent. A
// stdio client may pipeline its whole session; over HTTP those messages
// would otherwise race. A cancel naming a request sent on its own
// goroutine (or the closing of its stream) waits until the request's POST
// has been written ([transport.SendOptions].Written), then until the
// POST's answer headers came or [transport.LandGrace] (20 ms) passed
// since that write ([transport.Landing]): it goes on another connection,
// and must not reach the server, or a proxy between, before the request
// it names. A POST not written within
// the timeout holds it no longer (a note says so). A cancel closes no
// stream: the recorded client sent it with the stream of the request it
// names open, as the replay does; where it closed that stream, the tape
// says so and a step of its own closes it (see below). A cancel recorded
// in a batch with other messages is treated the same way, before the
// batch goes; one naming a request of its own batch waits for nothing: it
// goes in the same POST, after it, and the batch's stream, which carries
// the answers to its other requests, stays open. Over stdio and WebSocket frames are
// written in order by the sending goroutine.
//
// A live initialize answered with an error, where the recording's
// succeeded, fails the session with that error (every later step would
// only fail for that reason), once the answer is counted as differed like
// any other.
//
// # Rewriting
//
// Ids are one id by value, JSON-RPC 2.0's rule, the one inspect and mock
// follow (jsonrpc.ID.Key): 1, 1.0 and 1e0 are one id. Sent verbatim, byte
// for byte: every client frame, but for the values below. That includes
// invalid JSON, frames that are not JSON-RPC messages, requests whose id
// is null, an object, an array or a true fraction (1.5), notifications
// that carry an id, and an id the client used again, however spelled: its
// later uses carry the same live id as the first. A recorded batch is sent as one batch of its members, each
// rewritten (WithUnbatch sends them one by one).
//
// Rewritten: request ids that are strings or numbers of integral value
// are replaced by fresh ids of the same JSON type (numbers count up from
// 1, strings are "mcptape-N"), one per recorded id value, a number spelled
// as the recorded one (1.0 sent as 7.0, 1e0 as 7e0, so that the server
// still sees that spelling); progress tokens likewise. Sessions
// replayed at once (WithConcurrency above 1, or with a side stream) may
// meet in one scope of the server: a stateless server, without
// Mcp-Session-Id, cannot tell whose notifications/cancelled names which
// request. Their fresh numbers are then disjoint across the run: the
// i-th of n sessions (from 0) counts i+1, i+1+n, i+1+2n, … notifications/cancelled names the live id of
// the cancelled request. Answers to server requests carry the live id of
// the server's request. Server-chosen opaque values — task ids and MRTR
// requestState — are learnt by comparing each live response with its
// recorded twin, and replaced wherever a later client message carries the
// recorded value under the keys "taskId" or "requestState". The keys of an
// MRTR input_required answer's inputRequests are server-chosen too: each
// recorded key is mapped to the same live key when the live answer has it,
// else to the next live key of the same method (elicitation, sampling,
// roots) in order of appearance, and the retry's inputResponses are sent
// under the live keys; recorded keys left without a live counterpart (and
// live keys without a recorded answer) are reported as "input" problems,
// and the live answer is compared under the recorded keys. A 2026-07-28
// subscription id is the id of its subscriptions/listen request: a client
// message naming it (params._meta["io.modelcontextprotocol/subscriptionId"]
// or params.subscriptionId) names the live id instead. The transport
// (package transport) keeps Mcp-Session-Id from the live initialize and
// derives MCP-Protocol-Version, Mcp-Method and Mcp-Name from the body, so
// the headers always agree with the rewritten frame; recorded SSE event
// ids are not replayed. Before comparing, a fresh string id or token found
// in a live answer (a server may echo a progress token) is put back to the
// recorded value it stands for.
//
// # Comparison
//
// Each live response is compared with its recorded twin by package
// internal/jsondiff, ignoring its default volatile paths (ids, _meta,
// session and task ids, timestamps, request state) and the paths given
// with [WithIgnore]. Whether and how a cancelled request is answered
// depends on timing: such answers, and the progress of cancelled requests,
// are not compared. A live answer whose id is null or absent is paired
// with the recorded answers without an id, in order; the n-th answer to
// an id the client used again with its n-th use, and a second answer to
// one request (a server that answers twice) with the second recorded
// one. Notifications are
// compared as counts per method; the counts of [DefaultIgnoreNotifications]
// are reported but never fail the verdict. Once the last client message
// is sent, the server messages recorded after it (a notification after
// the last answer) are waited for until they arrive, or for their
// recorded gap plus [WithSettle]'s margin. A request the recording
// holds no answer to, neither cancelled nor refused, is sent as recorded;
// its live answer is waited for until that margin has passed since the
// last client message was sent, and is counted in
// [SessionReport.Unanswered], not compared: whether the live server
// answers it is reported, never a difference. Where the recorded client
// closed the HTTP response stream of a request still unanswered (the
// 2026-07-28 way to cancel: an "http" event closed_by "client"), a step
// ([Step.Closes]) closes the live stream at the same point: once as many
// server messages came on it as the recording holds from it, whatever the
// speed (the recorded time would let a faster server send more); what
// comes on it later is dropped, so only what was recorded before the
// close is compared. A server may hold the answer's headers back (some
// send them only with the first event): when the recorded close came
// after server messages on the stream, the replay waits, up to the
// timeout, for the live headers, which come before those messages; when
// it came before any, the recorded client gave the request up before its
// headers came, and so does the replay, ending that POST (its answer is
// not expected, as it is not in the recording). A live server request is
// answered where the recorded client answered its twin, and only then:
// one without a recorded twin gets the fallback, and counts as extra. An
// answer, recorded or fallback, that the live server refuses with an HTTP
// error status the recording did not have is a problem of kind "refused"
// (SessionReport.Refused): the server behaves otherwise, and the replay
// goes on; the session waits, up to the timeout, for the fallback answers
// still being sent before it closes the connection. The [Report]
// says per session how many answers matched, differed, are missing or
// extra, with a readable diff for each difference (in a session the tape's
// damage cut, [Session.Cut], the live answers to requests whose recorded
// answer was cut off count in Unanswered, and the other live messages
// that belong after the cut in a note); [Report.ExitCode] turns
// it into 0 (all matched), 1 (something differed) or 2 (a replay failed).
package replay
