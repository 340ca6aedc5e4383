package loadgen

// Calls answered in several results under one id (jsonrpc.StreamPart:
// start, deltas, a terminal end; the LangGraph MCP server's dialect). The
// call stays in flight until the end part: its latency in the call's
// series is the time to the end. Each such call is also recorded in two
// more series per name, NAME+FirstChunkSuffix (the time to the first
// part) and NAME+CompleteSuffix (to the end), and the end part's usage
// total_tokens are counted in NAME's Tokens, giving TokensPerSec.

import (
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
)

// Suffixes of the series of streamed calls: "tools/call chat#first_chunk"
// and "tools/call chat#complete".
const (
	FirstChunkSuffix = "#first_chunk"
	CompleteSuffix   = "#complete"
)

// streamDialect is the dialect of streamed answers the generator knows.
var streamDialect = jsonrpc.LangGraphStream()

// streamPart returns the stream part of an answer and, for an end part,
// its usage tokens.
func streamPart(frame []byte, info *jsonrpc.Info) (jsonrpc.StreamPart, int64) {
	if info.Kind != jsonrpc.KindResponse || !streamDialect.MayStream(frame) {
		return jsonrpc.PartSingle, 0
	}
	var full jsonrpc.Info
	members := jsonrpc.ClassifyMembers(frame, &full, nil)
	part := streamDialect.Part(frame, members)
	if part != jsonrpc.PartEnd {
		return part, 0
	}
	u, _ := streamDialect.Usage(frame, members)
	return part, u.TotalTokens
}

// streamedCall is what the reader learnt of a streamed answer, read by
// the caller once the answer is handed over.
type streamedCall struct {
	parts  int64     // parts before the terminal answer
	first  time.Time // the first part
	last   time.Time // the latest part
	end    bool      // the terminal answer was an end part
	tokens int64     // its usage total_tokens
}

// take notes an answer's part (see streamPart), arrived at at, and
// reports whether the call stays in flight: a start or a delta keeps it
// there until the terminal answer.
func (c *streamedCall) take(part jsonrpc.StreamPart, tokens int64, at time.Time) bool {
	switch part {
	case jsonrpc.PartStart, jsonrpc.PartDelta:
		if c.parts == 0 {
			c.first = at
		}
		c.parts++
		c.last = at
		return true
	case jsonrpc.PartEnd:
		c.end, c.tokens = true, tokens
	}
	return false
}

// seen reports whether the answer was streamed.
func (c *streamedCall) seen() bool { return c.parts > 0 || c.end }

// streamed records a streamed call of the named series, answered at end,
// intended at intended.
func (s *stats) streamed(names []string, c *streamedCall, intended, end time.Time) {
	first := c.first
	if c.parts == 0 {
		first = end
	}
	f, e := clampLatency(first.Sub(intended)), clampLatency(end.Sub(intended))
	s.mu.Lock()
	for _, n := range names {
		s.recordLocked([]string{n + FirstChunkSuffix}, f)
		s.recordLocked([]string{n + CompleteSuffix}, e)
		s.seriesCountsLocked(n).tokens += c.tokens
	}
	s.mu.Unlock()
}
