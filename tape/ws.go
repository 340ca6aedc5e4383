package tape

// EventWS is the event a WebSocket recording writes for a frame that is
// not a message: {"kind": "binary"|"ping"|"pong"|"close", ...}; see
// docs/tape-format.md.
const EventWS = "ws"

// StreamWS is the Stream of the messages of a WebSocket recording: each
// is one text frame.
const StreamWS = "ws"
