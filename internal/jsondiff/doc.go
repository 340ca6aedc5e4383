// Package jsondiff compares two JSON values structurally and lists their
// differences, ignoring volatile paths. mcptape diff uses it to compare two
// tapes message by message, and a replayer to compare a live server's answers
// with the recorded ones.
//
// # Data flow
//
// Compare takes the two values as raw bytes. Each is parsed in one validating
// pass into a flat array of nodes (kind and byte span; a container also knows
// where its last descendant ends), held in buffers reused across calls, so
// comparing two equal frames allocates nothing once warm. The two node arrays
// are then walked together: object members are matched by key (order does not
// matter), array elements by index. While descending, the Comparer follows the
// ignore patterns as a small state machine, so a subtree that an ignore
// pattern matches is skipped without being compared, and a subtree no pattern
// can reach costs nothing more. Each mismatch becomes a Difference with its
// path, its kind and the two raw values; Render writes them as a compact
// unified-style diff that fits a terminal.
//
// # Equality
//
//   - Objects are equal when they have the same keys with equal values, in any
//     order. A duplicated key counts once, with its last value (as
//     encoding/json decodes it).
//   - Arrays are compared element by element, by index: an element inserted at
//     the front shows as changes down the array and one addition at the end.
//     This keeps the result predictable and the cost linear.
//   - Numbers are compared by exact decimal value: 1, 1.0, 1e0 and 10e-1 are
//     equal, -0 equals 0, and 9007199254740993 differs from 9007199254740992
//     (no rounding to float64).
//   - Strings are compared after unescaping: "a" equals "\u0061".
//   - A value of another JSON type is a Difference of kind TypeChanged
//     (true and false are both booleans: that is a change, not a type change).
//
// # Paths
//
// A path names a place in a JSON value. It is written as a sequence of steps:
// an object key after a dot (the dot is omitted at the start), or an array
// index in brackets:
//
//	result.content[0].text
//	params.arguments["a.b"]     (keys that are not plain names are quoted)
//
// The root itself is written "" and shown as "(root)".
//
// Ignore patterns use the same syntax plus wildcards:
//
//   - any one key or index:            result.*.text
//     [*]      any one array index:             result.content[*].text
//     **       any number of steps, even none:  **._meta (every _meta at any depth)
//
// A pattern must match the whole path from the root: "id" ignores only the
// top-level id, "**.id" every id. A plain key may hold letters, digits, '_',
// '-', '$', '@' and '/'; any other key is written as a quoted JSON string in
// brackets: ["a.b"]. When a pattern matches a path, the value there is not
// compared, nor is its presence on one side only.
//
// DefaultIgnore lists the paths that change from one run of an MCP session to
// the next: request ids and the ids that refer to them, progress tokens,
// _meta, session, task and subscription ids, request state and timestamps.
package jsondiff
