// Package mock serves recorded MCP sessions to live clients: the recorded
// server answers, with no real server, network or credentials, so that a
// client, agent or host can be tested offline and a client-side bug
// reproduced with the exact answers that made it fail. It is the other
// half of package replay, which sends recorded clients to a live server.
//
// # Data flow
//
// replay.Load cuts a tape into sessions; [NewIndex] turns them into the
// matching index. Every recorded client request becomes an entry under its
// key (see [Match]: method and params with _meta and cursor left out, by
// default), with what the server said for it: the messages it sent while
// the request waited (its script), the answer, and the messages it sent
// after the answer before the next request (the tail). A server message
// belongs to the request whose progress token it carries, or on whose HTTP
// stream it came (a server request's related request), else to the latest
// request still waiting for its answer; one sent when none was waiting
// goes to the tail of the latest request. Several sessions make one pool,
// in the order of the tape. Only the recorded frames (shared with the
// session), the key and a few numbers are kept per request.
//
// A [Mock] holds the index and the matching state; each live connection is
// a [Conn], made by the transports: [Mock.ServeStdio] (newline-delimited
// frames), [Mock.HTTPHandler] / [Mock.ServeHTTP] (Streamable HTTP, with
// sessions, stateless for 2026-07-28) and [Mock.SSEHandler] /
// [Mock.ServeSSE] (legacy HTTP+SSE). A transport hands every client frame
// to [Conn.Handle] with the stream its answers go to (stdout, the POST's
// event stream, the GET stream). Handle matches in arrival order and draws
// the faults, then returns a [Play] for the rest: the script sent at its
// recorded times (divided by the speed), progress rewritten to the live
// token, server requests under fresh ids with the client's answer awaited
// (the clock restarts from the recorded answer), then the answer under the
// live id, then the tail in the background on the session's stream. A
// notifications/cancelled (or, over HTTP, a closed stream) stops a Play.
//
// # Decisions
//
//   - A key recorded n times answers its recorded answers in order, then
//     the last one again ([WithCycle]: from the first again). The count is
//     shared by all connections of a Mock.
//   - initialize, server/discover and ping match by method only; ping is
//     answered {} even when not recorded. The recorded initialize answer
//     keeps its protocol version: a client that asked for another one is
//     told the recorded version, as a server that speaks only that one
//     would answer, and the report notes it.
//   - When a stdio client's input ends, [Mock.ServeStdio] sends the
//     answers still due and, of each tail, the messages due by then (all
//     of them at [WithMaxSpeed]: what is written does not depend on how
//     the goroutines are scheduled), stops the rest, and returns; nothing
//     is written after it returned.
//   - A request whose recorded twin the client cancelled plays what came
//     before the recorded cancel, then waits for the live cancel: what the
//     recorded server sent after it depended on it.
//   - A request recorded without an answer is not answered: over stdio
//     and legacy SSE the Play ends when the client cancels or leaves; over
//     Streamable HTTP its POST stream ends after the recorded playback, as
//     the recorded one did.
//   - A request dropped by a fault (--drop-rate) plays nothing. Over
//     Streamable HTTP its POST stream ends, empty, when its answer would
//     have been sent (recorded latency and --delay), like a server that
//     lost the request while handling it; a client sees a stream end with
//     no answer. Over stdio and legacy SSE, where answers share one
//     stream, nothing tells the client: the Play ends when it cancels or
//     leaves.
//   - An unmatched request is answered -32601 (no recorded request has its
//     method) or -32602, with a message naming the closest recorded request
//     of the method (fewest differing params) and up to three differences.
//     Invalid JSON gets -32700 with a null id (over HTTP, status 400); a
//     JSON value that is no message, an empty batch (over HTTP, status
//     400) or a request with a null id, -32600 (one response, id null).
//     Serving goes on.
//   - Over Streamable HTTP, a POST without a session is served statelessly
//     when it is of protocol 2026-07-28 (its MCP-Protocol-Version header) or
//     server/discover; otherwise only initialize makes a session. An Origin
//     header must name a loopback host (403 otherwise).
//   - A batch is handled member by member. Over stdio its responses go out
//     as one array once every member is answered, in the order of the
//     batch (what comes before them, such as progress, goes out at once).
//     Over Streamable HTTP the answer has the shape the recorded server
//     answered batches in ([RecordedBatchShape], [WithBatchShape]): one
//     application/json array, in the order of the batch (the default, also
//     for tapes with no HTTP batch; should progress or a server request
//     have to go out first, the POST becomes an event stream and each
//     response follows as its own event), one event per message, or the
//     other messages as events and then the responses as one array in one
//     event.
//   - Faults draw from one generator seeded with [Faults].Seed, under the
//     mock's lock, in arrival order.
package mock
