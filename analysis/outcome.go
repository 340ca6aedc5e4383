package analysis

import "github.com/mcptape/mcptape/tape"

// How a request ends is decided in one place, the Inspector, and every
// output that names the outcome of a request takes it from there: inspect
// (its counts and problems), check (its signals), the requests table
// (the outcome column), the HTML report (the timeline and the latency
// charts: WithOperations) and the OTLP export (the span status of a
// request that got no answer: the Inspector's onSettled hook). This file
// holds what they share: the outcomes' words, and the reading of an HTTP
// exchange's end and of a session's close.

// outcomeInfo describes an outcome for the outputs that name it.
type outcomeInfo struct {
	// text says it in words: the HTML report's timeline, the OTLP span
	// status message.
	text string
	// failed tells a request that failed: an OTLP span with an error
	// status. A request the client cancelled or left before its answer,
	// or the recorder's own shutdown cut, did not fail.
	failed bool
}

// outcomes describes every outcome of an Operation.
var outcomes = map[string]outcomeInfo{
	OutcomeOK:            {"answered", false},
	OutcomeError:         {"JSON-RPC error", true},
	OutcomeToolError:     {"tool error", true},
	OutcomeCancelled:     {"cancelled", false},
	OutcomeUnanswered:    {"never answered", true},
	OutcomeAbandoned:     {"asked for input, never retried", true},
	OutcomeUnfinished:    {"task never finished", true},
	OutcomeRefused:       {"refused with an HTTP error", true},
	OutcomeCutByShutdown: {"cut by the recorder's shutdown", false},
	OutcomeBrokenOff:     {"response broken off", true},
	OutcomeClientGone:    {"client left", false},
	OutcomeLostInGap:     {"answer unknown: records missing from the tape", false},
}

// describeOutcome returns the description of outcome; an unknown one is
// a failure named by itself.
func describeOutcome(outcome string) outcomeInfo {
	if d, ok := outcomes[outcome]; ok {
		return d
	}
	return outcomeInfo{outcome, true}
}

// exchangeOutcome reads the end of an HTTP exchange (d, its "end" event)
// for the requests still in flight on it, which got no JSON-RPC answer
// there:
//
//   - an HTTP error status (4xx, 5xx) that the client got is their
//     answer: OutcomeRefused;
//   - the recorder's own shutdown cut the exchange (tape.ShutdownCutError
//     before the upstream answered, tape.ShutdownCutResponseError after
//     its response had started: the client got its head and what came
//     before the cut): OutcomeCutByShutdown, not the server's doing;
//   - the server's response broke off (the exchange closed by the server
//     with an error: its body failed mid-way, a reset, an unexpected
//     EOF): OutcomeBrokenOff, the server's doing;
//   - otherwise "": they stay in flight (an answer may still come on
//     another stream; a client that closed the exchange cancelled them).
func exchangeOutcome(d *httpEvent) string {
	switch {
	case d.Status >= 400 && d.ClosedBy != "client":
		return OutcomeRefused
	case d.ClosedBy == "proxy" && (d.Error == tape.ShutdownCutError || d.Error == tape.ShutdownCutResponseError):
		return OutcomeCutByShutdown
	case d.ClosedBy == "server" && d.Error != "":
		return OutcomeBrokenOff
	}
	return ""
}

// sessionCloseOutcome reads the close of a session (its "close" event's
// by and reason) for the requests sent before it and still in flight at
// the end of the tape:
//
//   - ended by the recorder's own shutdown (stdio: the recorder got a
//     signal, or its Go caller cancelled it, and stopped the server; HTTP
//     and WebSocket: the proxy stopped with the session open):
//     OutcomeCutByShutdown;
//   - the server ended the session (by "server"): a WebSocket connection
//     to the server lost (no close frame) or closed by its close frame,
//     an HTTP session the server answered 404 for (it no longer knows the
//     session: closed or forgotten, "not-found"), a legacy SSE stream the
//     server ended (the only way answers reach the client, "stream-ended"),
//     or a stdio server that exited by itself ("server-exit"): its
//     requests in flight can no longer be answered in that session,
//     OutcomeBrokenOff, the server ended the conversation, as a server
//     breaking off an HTTP response does;
//   - the client ended the session: a stdio client closed its input
//     ("client-eof"; the recorder closed the server's input in turn, and
//     the server exited without answering, by itself, the MCP way to end
//     a stdio session, or ended by the recorder after its grace period:
//     the "exit" event's "sent" says which), an HTTP client deleted the
//     session or closed its legacy SSE stream, a WebSocket client closed
//     or lost its connection (by "client"). Either way the client had
//     left before the answer, and no answer could reach it in that
//     session: OutcomeClientGone, not the server's doing (a stdio client
//     that closed its input and went on reading gets the answers sent
//     before the server exits; they are recorded and paired; a streamed
//     answer the server had started and not ended stays its unfinished
//     stream: see Inspector.finishPending);
//   - otherwise "": never answered.
func sessionCloseOutcome(by, reason string) string {
	switch {
	case by == "signal" || by == "context" || (by == "proxy" && reason == "shutdown"):
		return OutcomeCutByShutdown
	case by == "server" || by == "server-exit":
		return OutcomeBrokenOff
	case by == "client-eof" || by == "client":
		return OutcomeClientGone
	}
	return ""
}
