// Package clientconfig rewrites the server entries of MCP clients'
// configuration files so that a stdio server runs through "mcptape
// record", and puts them back. "mcptape wrap" and "mcptape unwrap" are its
// command line.
//
// The clients and where their servers are:
//
//	claude-desktop  claude_desktop_config.json, "mcpServers"
//	                (macOS ~/Library/Application Support/Claude,
//	                Windows %APPDATA%\Claude, elsewhere ~/.config/Claude)
//	cursor          ~/.cursor/mcp.json (or a project's .cursor/mcp.json), "mcpServers"
//	vscode          .vscode/mcp.json or the user profile's mcp.json, "servers"
//	                (settings.json: "mcp": {"servers"}); JSON with comments
//	claude-code     ~/.claude.json, "mcpServers" and each project's
//	                "projects": {PATH: {"mcpServers"}} (or a project's .mcp.json)
//
// A stdio entry has "command" (and "args", "env", ...). Wrapping moves the
// command into the arguments of mcptape record:
//
//	"command": "npx", "args": ["-y", "srv"]
//	"command": "/usr/local/bin/mcptape", "args": ["record", "--name", "NAME", "--", "npx", "-y", "srv"]
//
// and leaves every other key ("env", "cwd", "type"...) as it is; the client
// passes those to mcptape, which passes them on to the server. The tapes
// go to mcptape's state directory, named after the server (--name).
//
// Edits are made in place on the file's text, located by a parser that
// keeps each value's byte span (jsonc.go): nothing else in the file is
// re-encoded, so unrelated keys, their order, comments and indentation
// stay, and unwrapping after wrapping gives the file back byte for byte.
// The one exception: an entry whose "args" was an empty array written on
// the command's line comes back without "args" (the same to every client).
//
// HTTP entries ("url", or a "type" other than stdio) are not wrapped: the
// client connects to them itself, so there is no command to put mcptape
// in front of. Naming one is an error that says how to record it instead
// (mcptape record --upstream URL --listen ADDR); --all skips them.
package clientconfig
