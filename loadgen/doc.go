// Package loadgen is the load generator of mcptape: many virtual MCP
// sessions sending a weighted mix of calls to one server, with latency
// recorded in HdrHistograms and reported per method, per tool and for
// session setup.
//
// # Data flow
//
// [ParseCall] turns each --call spec into a [Call]; [Run] builds one frame
// template per call (the request id, and with [WithProgress] the
// progressToken, are the only bytes written per request), creates the
// sessions and drives them with one of two models:
//
//   - Closed (default): every session runs K loops ([WithInFlight]), each
//     sending its next request when the previous one was answered, after
//     the think time. Latency is measured from the actual send. Sessions
//     start evenly over the ramp.
//   - Open ([WithRate]): arrivals are due at fixed intended times (the
//     rate growing linearly over the ramp) and are handed round-robin to
//     the sessions, each by an idle worker goroutine or a new one, up to
//     [WithMaxInFlight] (then the arrival is dropped and counted). Latency
//     is measured from the intended time, as wrk2 does, so a server stall
//     shows in the percentiles instead of silently slowing the schedule
//     (coordinated omission). Sessions are all set up before the clock
//     starts.
//
// Each session is a [transport.Conn] (Streamable HTTP with a shared tuned
// client, legacy HTTP+SSE, or a stdio child process) plus one reader
// goroutine that takes every frame the server sends, matches responses to
// the waiting requests by id, counts progress notifications and answers the
// server's own requests (ping with {}, anything else with -32601). Several
// requests may be in flight per session over every transport.
//
// Workloads come from --call specs, from a scenario file ([ParseScenario]:
// per-session setup steps, weighted steps, think times, argument templates
// with session, iteration, random-choice and random-string variables), or
// from a tape ([RunTape]: every virtual session replays a recorded session
// through package replay, identifiers rewritten, each connection metered).
//
// Beyond plain calls: [WithBatch] sends JSON-RPC arrays of K requests and
// reports how the server answered them ([BatchReport]: accepted, rejected
// with an HTTP status, dropped, hung until timeout), saying up front
// ([WithNotice]) when the negotiated version has no batches;
// [WithProgress] puts the request id as progressToken and counts the
// notifications, with the time to the first one and between them as
// series; [WithCancel] cancels a share of the calls after a delay, the way
// the transport and version call for, and measures the time from each
// cancellation to the server going quiet ([CancelReport]);
// [WithGetStream] opens every session's GET stream and counts the
// server's own messages on it, answering its requests ([GetStreamReport]).
//
// Figures go into one shared, mutex-guarded set of HdrHistograms
// (nanoseconds, 1 ns to 1 h, 3 significant digits) and error counters by
// class: connect, http status, jsonrpc error, tool isError, timeout,
// protocol, session expired. The [Report] holds every figure and each
// histogram in the V2 compressed encoding, so that [Merge] combines the
// reports of several generators exactly; [Threshold] checks a report for
// CI gates. [Report.WriteHgrmDir] writes percentile distribution files
// for the HdrHistogram plotter and [WithHlog] an interval log while the run
// goes. kubernetes.md shows N generators as a Kubernetes Indexed Job.
//
// # Decisions where the issue is silent
//
//   - Every answered request is recorded in the latency series, error
//     answers included; timeouts and failed sends are not (they have no
//     latency) and are counted as errors only.
//   - An expired HTTP session (404, or server-everything's 400) counts one
//     "session expired" error; the request is lost and the session sets
//     itself up again before its next request, which counts as a new setup.
//   - Session setup is dial (the child process start, for stdio) plus
//     initialize and its answer plus notifications/initialized. From
//     2026-07-28 there is no handshake: the setup measured is
//     server/discover (an error answer is counted but the session goes
//     on), and every request carries the protocol metadata in
//     params._meta, the transport adding the Mcp-Method and Mcp-Name
//     headers. Tape-driven load (RunTape) measures a recorded session's
//     setup the same way: its initialize, or its server/discover when that
//     is the session's first request.
//   - When the run is interrupted (its context ends), requests in flight
//     are abandoned and counted as errors of kind ClassCancelled
//     ("interrupted"), and the report says Interrupted.
//   - Errors are counted by kind (ClassTransport, ClassStatus,
//     ClassJSONRPC, ClassTool, ClassTimeout, ClassCancelled,
//     ClassDropped, ClassProtocol, ClassExpired) and message, at most
//     maxErrorKeys distinct ones (then "(other)"). Transport messages are
//     stable words without addresses or process ids ("connection
//     refused", "server exited (status 1)", "executable not found: x"),
//     so that equal failures count as one line.
//   - Every series counts its requests and errors (Series.Requests,
//     Series.Errors): a series' error share is over its own requests.
//     Session setup is a series of its own, not a request. Each request
//     sent ends counted once: OK, ErrorAnswers (answered with an error),
//     NoAnswer, or cancelled on purpose (WithCancel); the open model's
//     arrivals Dropped were never sent. The run's error ratio (for
//     "errors<1%"; "errors<N" counts the same) is the requests not ok
//     (RequestErrors: error answers, no answer, dropped) over the
//     requests sent plus the arrivals dropped.
//   - A run where no session could be set up, or aborted because a stdio
//     server exited (OnExitStop, the default), reports why in
//     Report.Failure (the CLI exits 1). The requests in flight on a stdio
//     server that exits fail at once with *ServerExitError: the session's
//     reader sees the output end and fails them, rather than letting them
//     wait for the timeout.
//   - A closed-model loop whose request fails on transport (connection
//     refused, reset, unreachable, a stdio server gone) or with HTTP
//     status 429, 502, 503 or 504, or whose session cannot be set up
//     again, backs off before its next attempt (BackoffMin doubling to
//     BackoffMax, jitter in the upper half; Retry-After is not followed):
//     a dead server costs a few attempts per second per loop, not a tight
//     loop. Any other HTTP error status (400, 404, 500...) is the answer
//     to that request: counted, and the next request goes at once. The
//     open model keeps its schedule. Report.Outage says how long the server was unreachable
//     (from a transport failure, once some session was set up, to the
//     next answer) and how many attempts failed meanwhile; a server still
//     unreachable for DownAtEndFailure at the end fails the run. An HTTP
//     answer that ends without answering its request (the server died
//     mid-stream) fails the request at once (after answerGrace for the
//     reader to hand over an answer it carried), unless the answer may
//     still come on the session's GET stream.
//   - The open model sends every arrival due within the duration, late if
//     the generator itself fell behind (still measured from its intended
//     time); the duration is judged by intended times, not by the clock.
//   - Session setup obeys the timeout (WithTimeout) like any request;
//     over stdio it includes starting the server.
//   - Over Streamable HTTP without a GET stream a session's reader
//     goroutine runs only while requests are pending (every frame then
//     answers a request), so idle sessions cost no goroutine; a JSON
//     answer, which the connection has queued when Send returns, is taken
//     by the request that sent it without starting the reader at all (no
//     goroutine hand-off per request). The shared HTTP client is
//     transport.NewHTTPClient's: plain HTTP goes over its lean HTTP/1.1
//     path (no goroutine per request). With WithMaxConns the connection
//     pool is bounded and requests waiting for a connection count that
//     wait in their latency.
//   - Cancelled calls are not in the latency series and are not errors. A
//     call answered before its cancel delay is an ordinary call. Over
//     2025-era HTTP closing the stream right after notifications/cancelled
//     means only an answer crossing the cancellation can be seen. The
//     cancel delay runs from the send, but the cancellation waits for the
//     call's request to be written (transport.SendOptions.Written) and,
//     over HTTP, where it goes on another connection, for the answer's
//     headers or transport.LandGrace (20 ms) after that write: a cancel that overtook
//     its call would find the server knowing no such request.
//   - A batch counts as K requests for WithRequests; a member not answered
//     by the timeout is a timeout error. Over stdio, where a line has no
//     answer of its own, a ping follows each batch: once it is answered
//     and nothing of the batch came for BatchGrace, the batch is "no
//     answer to batch" (its members ClassDropped errors) instead of
//     waiting for the timeout; the ping is not counted. BatchReport.Verdict
//     says whether batches were answered at all.
package loadgen
