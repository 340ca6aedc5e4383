package jsonrpc

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

// methodTable maps each known method name to itself, so that a lookup keyed
// by a converted byte slice returns the interned string without allocating.
// It is filled once and only read afterwards.
var methodTable = func() map[string]string {
	m := make(map[string]string, len(knownMethods))
	for _, name := range knownMethods {
		m[name] = name
	}
	return m
}()

// internMethod returns the interned name equal to raw, if raw is known.
func internMethod(raw []byte) (string, bool) {
	s, ok := methodTable[string(raw)]
	return s, ok
}
