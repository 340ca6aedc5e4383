package jsonrpc

import "encoding/binary"

// Method names that Classify treats specially.
const (
	// MethodProgress is the progress notification; its token is
	// params.progressToken.
	MethodProgress = "notifications/progress"
	// MethodCancelled is the cancellation notification; its target is
	// params.requestId.
	MethodCancelled = "notifications/cancelled"
)

// knownMethods lists every method name of the released MCP versions
// 2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25 and 2026-07-28 (core
// schema and the tasks extension). Classify returns these strings instead
// of allocating new ones.
var knownMethods = [...]string{
	// Lifecycle and utilities (2024-11-05 on; 2026-07-28 drops the handshake
	// and ping and adds server/discover).
	"initialize",
	"notifications/initialized",
	"ping",
	"server/discover",
	MethodCancelled,
	MethodProgress,
	// Resources.
	"resources/list",
	"resources/templates/list",
	"resources/read",
	"resources/subscribe",
	"resources/unsubscribe",
	"notifications/resources/list_changed",
	"notifications/resources/updated",
	// Prompts.
	"prompts/list",
	"prompts/get",
	"notifications/prompts/list_changed",
	// Tools.
	"tools/list",
	"tools/call",
	"notifications/tools/list_changed",
	// Logging and completion.
	"logging/setLevel",
	"notifications/message",
	"completion/complete",
	// Client features requested by the server.
	"sampling/createMessage",
	"roots/list",
	"notifications/roots/list_changed",
	"elicitation/create",                 // 2025-06-18 on
	"notifications/elicitation/complete", // 2025-11-25 on
	// Tasks: experimental in 2025-11-25, an extension in 2026-07-28.
	"tasks/get",
	"tasks/result",
	"tasks/list",
	"tasks/cancel",
	"tasks/update",
	"notifications/tasks/status",
	// Subscriptions (2026-07-28).
	"subscriptions/listen",
	"notifications/subscriptions/acknowledged",
}

// methodsByLen lists the known method names by length, each with the
// words ends gives for it, so that interning a name compares two words
// with those of the few names of its length (and the whole name only when
// they match and it is longer than 16 bytes) instead of hashing it for a
// map lookup. It is filled once and only read afterwards.
var methodsByLen = func() [][]methodEntry {
	var t [][]methodEntry
	for _, name := range knownMethods {
		for len(t) <= len(name) {
			t = append(t, nil)
		}
		head, tail := ends([]byte(name))
		t[len(name)] = append(t[len(name)], methodEntry{head, tail, name})
	}
	return t
}()

// methodEntry is a known method name and its ends.
type methodEntry struct {
	head, tail uint64
	name       string
}

// ends returns the first and the last eight bytes of b as little-endian
// words (four bytes each when b is shorter than eight, zero when shorter
// than four). Two names of the same length of 4 to 16 bytes are equal
// exactly when their ends are.
func ends(b []byte) (head, tail uint64) {
	switch n := len(b); {
	case n >= 8:
		return binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint64(b[n-8:])
	case n >= 4:
		return uint64(binary.LittleEndian.Uint32(b)), uint64(binary.LittleEndian.Uint32(b[n-4:]))
	}
	return 0, 0
}

// internMethod returns the interned name equal to raw, if raw is known.
func internMethod(raw []byte) (string, bool) {
	n := len(raw)
	if n < 4 || n >= len(methodsByLen) {
		return "", false // every known name has at least four bytes
	}
	head, tail := ends(raw)
	for _, e := range methodsByLen[n] {
		if e.head == head && e.tail == tail && (n <= 16 || string(raw) == e.name) {
			return e.name, true
		}
	}
	return "", false
}
