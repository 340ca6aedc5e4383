package main

import (
	"strings"

	"github.com/mcptape/mcptape/replay"
	"github.com/mcptape/mcptape/transport"
	"github.com/spf13/pflag"
)

// streamPathFlag registers --stream-path, shared by replay and load.
func streamPathFlag(fs *pflag.FlagSet, p *string) {
	fs.StringVar(p, "stream-path", "", "with an http(s) --url: read the server's messages from an event stream opened with GET at `PATH` "+
		"(such as /mcp/stream: the LangGraph MCP docs' HTTP, whose POSTs get plain JSON or 202 and whose answers, streamed or not, come on that stream); "+
		"replay finds it in a tape recorded from such a server by itself")
}

// checkStreamPath checks --stream-path against --url.
func checkStreamPath(path, url string) error {
	switch {
	case url == "" || transport.IsWebSocketURL(url):
		return usageError("--stream-path needs an http:// or https:// --url")
	case !strings.HasPrefix(path, "/") && !strings.HasPrefix(path, "http://") && !strings.HasPrefix(path, "https://"):
		return usageError("--stream-path %q: want a path such as /mcp/stream, or an http(s) URL", path)
	}
	return nil
}

// setStreamPath makes the sessions read the server's messages from the
// side stream at path (when path is not ""), whatever their tape says.
func setStreamPath(sessions []*replay.Session, path string) {
	if path == "" {
		return
	}
	for _, s := range sessions {
		s.StreamPath = path
	}
}
