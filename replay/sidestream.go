package replay

import (
	"bytes"
	"encoding/json"
	"mime"

	"github.com/mcptape/mcptape/tape"
)

// Side streams: the HTTP dialect of the LangGraph MCP server's
// documentation answers POSTs with plain JSON (or 202) and sends the
// server's messages, streamed answers included, on an event stream the
// client opens with GET at another path (/mcp/stream). The capture proxy
// records an answer that came on such a stream in the session of its
// request, with the stream's exchange number, while the stream's own
// "http" events stay in the session of the stream's connection. index
// learns the GET event streams from their "response" events and gives a
// session whose answers came on a stream of another session that
// stream's path (Session.StreamPath): HTTPOptions then makes the live
// connection open it (transport.WithStreamPath).
//
// Such a server cannot tell its clients apart and may send every message
// on every stream: the live connection keeps only the answers to its own
// requests in flight, so sessions replayed at once must not have the same
// live id in flight. Their live ids are made disjoint (Run, sharedSpace),
// as those of all sessions replayed concurrently are.

// maxStreams bounds the GET event streams index remembers.
const maxStreams = 1 << 16

// getStream is a recorded GET event stream.
type getStream struct {
	session, path string
}

// getStreams maps exchange numbers to the GET event streams of a tape.
type getStreams map[uint64]getStream

// noteEvent learns a GET event stream from an "http" event.
func (g getStreams) noteEvent(rec *tape.Record) {
	if rec.Exchange == 0 || !bytes.Contains(rec.Data, []byte(`"GET"`)) || !bytes.Contains(rec.Data, []byte(`text/event-stream`)) {
		return
	}
	var d struct {
		Phase       string `json:"phase"`
		Method      string `json:"method"`
		Path        string `json:"path"`
		Status      int    `json:"status"`
		ContentType string `json:"content_type"`
	}
	if json.Unmarshal(rec.Data, &d) != nil || d.Phase != "response" || d.Method != "GET" || d.Status/100 != 2 || d.Path == "" {
		return
	}
	if mt, _, err := mime.ParseMediaType(d.ContentType); err != nil || mt != "text/event-stream" {
		return
	}
	if len(g) >= maxStreams {
		clear(g)
	}
	g[rec.Exchange] = getStream{session: rec.Session, path: d.Path}
}

// sidePath returns the path of the stream a message record of another
// session came on, or "".
func (g getStreams) sidePath(rec *tape.Record) string {
	if rec.Stream != "get" || rec.Dir != tape.ServerToClient {
		return ""
	}
	if s, ok := g[rec.Exchange]; ok && s.session != rec.Session {
		return s.path
	}
	return ""
}
