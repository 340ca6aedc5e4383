// Package proc starts and stops the child processes of mcptape (the stdio
// servers that "record" proxies and "load" drives, and the peers of the
// tests), all with one policy:
//
//   - A child runs in a process group of its own (Unix) or a new console
//     process group inside a job object (Windows), so that stopping it
//     reaches the processes it started (npx starts node, uv starts python).
//   - A child dies with mcptape. On Linux the kernel sends it SIGTERM when
//     mcptape dies, even by SIGKILL (the parent-death signal). On macOS and
//     FreeBSD there is no such signal: a child learns that mcptape died from
//     the end of its stdin (an MCP server must exit then), and one that
//     ignores it keeps running. On Windows the job object is closed with
//     mcptape, which terminates every process in it.
//   - Stop closes the child's stdin, waits a grace period, sends SIGTERM to
//     its group, waits again, then SIGKILL; once the child has exited, what
//     is left of its group is killed.
//   - Exit statuses read the same everywhere (Status): the exit code, or
//     128+N and the signal's name when signal N ended it; ExitCannotStart
//     (127) when it could not be started.
//
// On Windows, which has no signals between processes, SIGINT and SIGTERM
// are sent as a CTRL_BREAK_EVENT to the child's console process group (the
// child's Ctrl-C; a child without mcptape's console cannot get it and is
// terminated instead), and every other signal terminates the job with exit
// code 128+N, which Status reads back as that signal.
package proc
