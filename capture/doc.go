// Package capture holds mcptape's recording proxies: programs that sit
// between an MCP client and an MCP server, forward every byte unchanged and
// record a copy of every message in a tape.
//
// # Stdio
//
// [RunStdio] starts the server as a child process and connects it to the
// client's streams:
//
//	client stdin  ──▶ pump c2s ──▶ child stdin
//	client stdout ◀── pump s2c ◀── child stdout
//	client stderr ◀── pump err ◀── child stderr
//	                     │
//	                     ▼ a copy of each chunk, after it was forwarded
//	          transport.LineFramer ──▶ tape records (messages, stderr events)
//
// Each pump reads a chunk, writes it to its destination at once (no waiting
// for a full line, no re-encoding), then hands the same chunk to a line
// framer that emits complete frames to the tape writer. The tape writer
// never does disk I/O on the pump's goroutine; when its bounded queue is
// full it makes the pump wait (counted in the tape's statistics), which
// slows the traffic down rather than dropping records. The c2s and s2c
// pumps order their records so that an answer is never written before the
// request that caused it (see stdio_order.go); forwarding never waits for
// this.
//
// The child is started and signalled by internal/proc, the process manager
// mcptape's stdio client and test peers share. It runs in its own process
// group, and signals go to the whole group, so that wrappers such as "npx server" or "sh -c ..." take their
// real server down with them, and terminal Ctrl-C reaches only mcptape,
// which forwards it exactly once. The flip side: a client that kills
// mcptape's process group does not reach the child directly. The child then
// sees its stdin close (mcptape's end of the pipe dies with mcptape), and on
// Linux the kernel also sends it SIGTERM when mcptape dies (parent-death
// signal), even by SIGKILL; on Windows the child is in a job object that
// terminates it when mcptape exits, and SIGINT or SIGTERM reach it as a
// CTRL_BREAK_EVENT (see internal/proc).
//
// A stdio tape holds one session, named [DefaultSession]. Shutdown follows
// the MCP stdio rules; see [RunStdio] for the sequence and the records it
// leaves in the tape.
//
// # HTTP
//
// [HTTPProxy] is a recording reverse proxy for MCP over HTTP (Streamable
// HTTP in every spec era, and the legacy HTTP+SSE transport); [HTTPProxy.Serve]
// runs it on a listener:
//
//	client ──▶ request body tee ──▶ ReverseProxy ──▶ upstream
//	client ◀── exchange writer  ◀── ReverseProxy ◀── upstream
//	               │ a copy of each chunk, after it reached the client
//	               ▼
//	  whole JSON body / transport.SSEFramer ──▶ tape records
//
// Every request is one exchange, numbered from 1. The request body is teed
// as the upstream transport reads it and recorded as the client's messages;
// response bytes are written (and, for event streams, flushed) to the
// client first, then parsed from the copy: a JSON body becomes messages
// when it ends, an event stream one message per SSE event, each timed
// when the write that carried its last bytes to the client began, so that
// nothing the client sends in reply is timed before it. Around them
// the exchange writes "http" events (Phase "response" when the headers
// arrive, "end" when it is over; an [HTTPEvent]), "sse" notes for events
// without a message (an [SSENote]) and "error" events. Records are
// grouped in sessions by Mcp-Session-Id, by the legacy sessionId query
// parameter, or, without either, by client connection ("conn-N": but an
// answer on a sessionless GET stream, and a cancel on another connection
// than its request, go to the request's session, see http_side.go), each
// opened and closed by "open" and "close" events (an [HTTPSessionEvent]).
// Header and query values that look secret are redacted in the tape only.
// See [HTTPProxy] for the rules, and docs/tape-format.md for the records.
//
// For production capture: every record goes to the tape through one place,
// where [WithSample] (whole sessions, by a seeded hash of their id) and
// [WithMethodFilter] (messages by method, responses with their request)
// leave records out, counted in [HTTPStats].Unrecorded; [WithTLS] makes
// the listener speak HTTPS (HTTP/1.1 only, see http_tls.go); and
// [WithObserver] reports each exchange and message to an [HTTPObserver]
// (the metrics of "mcptape record --metrics"). The tape side (rotation,
// retention, recovery from a full disk) is the tape package's.
//
// # Redaction
//
// [RedactArgs] and [RedactAssignment] remove secret values from command
// lines before they are written into a tape header; the HTTP proxy redacts
// headers and queries with the same marker ([RedactedClass]).
package capture
