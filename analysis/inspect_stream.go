package analysis

// Answers streamed as several results under one id, ended by a terminal
// one (jsonrpc.StreamPart): a non-standard extension, seen in the
// LangGraph MCP server's docs. The inspector takes the parts of one answer
// as one operation, timed from the request to the first part and to the
// end.

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// streamDialect is the dialect of streamed answers the inspector reads.
var streamDialect = jsonrpc.LangGraphStream()

// StreamStats describes the streamed answers of a tape.
type StreamStats struct {
	// Dialect names the result member and values that mark the parts.
	Dialect string `json:"dialect"`
	// Operations counts the streamed answers that ended (by an end part,
	// or by an error or plain answer after some parts).
	Operations int64 `json:"operations"`
	// Chunks counts their parts (start, deltas, end) and Bytes the bytes
	// of those frames.
	Chunks int64 `json:"chunks"`
	Bytes  int64 `json:"bytes"`
	// Usage sums the token counts of the end parts.
	Usage jsonrpc.Usage `json:"usage"`
	// FirstChunk is the time from a request to its first part, Complete
	// the time to its end.
	FirstChunk Latency `json:"first_chunk"`
	Complete   Latency `json:"complete"`
	// Unfinished counts streams cut before their end (the tape ended
	// first); the first ones are listed.
	Unfinished         int64        `json:"unfinished"`
	UnfinishedRequests []RequestRef `json:"unfinished_requests,omitempty"`
	// AfterEnd counts parts for a request whose stream had ended.
	AfterEnd int64 `json:"after_end"`
	// ByMethod is the same per direction, method and tool.
	ByMethod []StreamMethodStats `json:"by_method"`
}

// StreamMethodStats is StreamStats for the streams of one method (and
// tool, for tools/call) in one direction.
type StreamMethodStats struct {
	Dir        string        `json:"dir"`
	Method     string        `json:"method"`
	Tool       string        `json:"tool,omitempty"`
	Operations int64         `json:"operations"`
	Chunks     int64         `json:"chunks"`
	Bytes      int64         `json:"bytes"`
	Usage      jsonrpc.Usage `json:"usage"`
	FirstChunk Latency       `json:"first_chunk"`
	Complete   Latency       `json:"complete"`
}

type streamKey struct {
	dir          tape.Direction
	method, name string
}

type streamAgg struct {
	ops, chunks, bytes int64
	usage              jsonrpc.Usage
	first, complete    latencyHist
}

// streamState is what the Inspector keeps about streamed answers.
type streamState struct {
	total      streamAgg
	by         map[streamKey]*streamAgg
	unfinished []RequestRef
	nUnfin     int64
	afterEnd   int64
}

func newStreamState() streamState {
	return streamState{by: map[streamKey]*streamAgg{}}
}

// streamPartOf returns the stream part of a response: PartSingle unless
// its result's part member names one.
func streamPartOf(it *Item) jsonrpc.StreamPart {
	if it.Info.Kind != jsonrpc.KindResponse {
		return jsonrpc.PartSingle
	}
	var v []byte
	if fs := it.fields; fs != nil {
		v = fs.at[rStreamType].of(it.Frame)
	} else {
		if !streamDialect.MayStream(it.Frame) {
			return jsonrpc.PartSingle
		}
		v = lookup(it.Frame, "result", streamDialect.TypeKey)
	}
	if len(v) < 2 || v[0] != '"' {
		return jsonrpc.PartSingle
	}
	if name, ok := stringValue(v); ok {
		return streamDialect.PartNamed([]byte(name))
	}
	return jsonrpc.PartSingle
}

// streamChunk handles a start or delta part: the request stays in flight.
func (in *Inspector) streamChunk(it *Item, s *sessionState) {
	rec, info := it.Rec, &it.Info
	if !Pairable(info.ID) {
		s.count(rec.Dir, info.Kind, "")
		return
	}
	req, ok := in.inflight.Lookup(rec.Session, Opposite(rec.Dir), info.ID)
	if !ok {
		s.count(rec.Dir, info.Kind, "")
		in.unpairedPart(it, s, jsonrpc.PartDelta)
		return
	}
	s.count(rec.Dir, info.Kind, req.method)
	if req.chunks == 0 {
		req.firstPart = rec.Time
		in.note(RuleStreamedResponse, it, "first part of the answer to %s", req.method)
	}
	req.chunks++
	req.chunkBytes += int64(len(it.Frame))
}

// unpairedPart reports a response (stream part or not) for no request in
// flight: a stream part after the answer to its id, or an unknown id.
func (in *Inspector) unpairedPart(it *Item, s *sessionState, part jsonrpc.StreamPart) {
	in.buf = tokenKey(in.buf[:0], it.Rec.Session, Opposite(it.Rec.Dir), it.Info.ID)
	if part.Streamed() && in.answeredIDs.has(string(in.buf)) {
		in.streams.afterEnd++
		in.violation(RuleStreamAfterEnd, it, s, "the stream of id %s had ended", clip(string(it.Info.ID.Raw), 20))
		return
	}
	if in.streamCopy(it, s) {
		in.note(RuleStreamCopy, it, "another client's request")
		return
	}
	in.violation(RuleResponseUnknownID, it, s, "no such request in flight")
}

// streamEnd closes the streamed answer to req with the terminal response
// it (an end part, or any answer after some parts).
func (in *Inspector) streamEnd(it *Item, s *sessionState, req *request, part jsonrpc.StreamPart) {
	rec := it.Rec
	if req.chunks == 0 { // an end with no start: a stream of one part
		req.firstPart = rec.Time
		in.note(RuleStreamedResponse, it, "answer to %s", req.method)
	}
	var u jsonrpc.Usage
	if part == jsonrpc.PartEnd {
		if raw := lookup(it.Frame, "result", streamDialect.UsageKey); raw != nil && json.Unmarshal(raw, &u) == nil && u.TotalTokens == 0 {
			u.TotalTokens = u.PromptTokens + u.CompletionTokens
		}
	}
	k := streamKey{req.dir, req.method, ""}
	if req.method == mToolsCall {
		k.name = req.name
	}
	a := in.streams.by[k]
	if a == nil {
		a = &streamAgg{}
		in.streams.by[k] = a
	}
	for _, a := range [...]*streamAgg{a, &in.streams.total} {
		a.ops++
		a.chunks += req.chunks + 1
		a.bytes += req.chunkBytes + int64(len(it.Frame))
		a.usage.PromptTokens += u.PromptTokens
		a.usage.CompletionTokens += u.CompletionTokens
		a.usage.TotalTokens += u.TotalTokens
		a.first.record(req.firstPart - req.time)
		a.complete.record(rec.Time - req.time)
	}
}

// streamUnfinished counts a request still in flight at the end of the
// tape after some parts of its answer, and reports whether it was one.
func (in *Inspector) streamUnfinished(req *request) bool {
	if req.chunks == 0 {
		return false
	}
	in.streams.nUnfin++
	req.sess.unanswered++ // so that check's unanswered signal fires, naming it
	keepDetail(in, req.sess, unansweredDetails, func() RequestRef { return in.ref(req) })
	in.streams.unfinished = append(in.streams.unfinished, in.ref(req))
	return true
}

// streamReport renders the streams, nil when the tape had none.
func (in *Inspector) streamReport() *StreamStats {
	st := &in.streams
	if st.total.ops == 0 && st.nUnfin == 0 && st.afterEnd == 0 {
		return nil
	}
	slices.SortFunc(st.unfinished, func(a, b RequestRef) int { return cmp.Compare(a.Seq, b.Seq) })
	r := &StreamStats{Dialect: streamDialect.Start + "/" + streamDialect.Delta + "/" + streamDialect.End,
		Operations: st.total.ops, Chunks: st.total.chunks, Bytes: st.total.bytes, Usage: st.total.usage,
		FirstChunk: st.total.first.summary(), Complete: st.total.complete.summary(),
		Unfinished: st.nUnfin, UnfinishedRequests: st.unfinished[:min(len(st.unfinished), in.o.maxListed)],
		AfterEnd: st.afterEnd, ByMethod: make([]StreamMethodStats, 0, len(st.by))}
	for k, a := range st.by {
		r.ByMethod = append(r.ByMethod, StreamMethodStats{Dir: string(k.dir), Method: k.method, Tool: k.name,
			Operations: a.ops, Chunks: a.chunks, Bytes: a.bytes, Usage: a.usage,
			FirstChunk: a.first.summary(), Complete: a.complete.summary()})
	}
	slices.SortFunc(r.ByMethod, func(a, b StreamMethodStats) int {
		return cmp.Or(cmp.Compare(a.Dir, b.Dir), cmp.Compare(a.Method, b.Method), cmp.Compare(a.Tool, b.Tool))
	})
	return r
}

// writeStreams writes the STREAMS block of the text report.
func writeStreams(p func(string, ...any), st *StreamStats) {
	if st == nil {
		return
	}
	p("")
	p("STREAMS  (non-standard: several results per id, %s)", st.Dialect)
	p("  %s of %s, %s; %d unfinished, %s after the end", english.Count(st.Operations, "answer"), english.Count(st.Chunks, "part"),
		english.Count(st.Bytes, "byte"), st.Unfinished, english.Count(st.AfterEnd, "part"))
	p("  tokens %d prompt + %d completion = %d", st.Usage.PromptTokens, st.Usage.CompletionTokens, st.Usage.TotalTokens)
	p("                                    count    mean     p50     p90     p99     max   parts  tokens")
	for i, m := range st.ByMethod {
		if i == textRows {
			p("  … %d more", len(st.ByMethod)-textRows)
			break
		}
		name := m.Method
		if m.Tool != "" {
			name += " " + m.Tool
		}
		p("  %s %-21s first %s  %6d  %6d", arrow(m.Dir), clip(name, 21), latencyCols(m.FirstChunk), m.Chunks, m.Usage.TotalTokens)
		p("    %-21s   end %s", "", latencyCols(m.Complete))
	}
}

// htmlStreams is the streamed answers section of the HTML report.
type htmlStreams struct {
	Dialect, Summary string
	Table            htmlTable
}

// streamsSection renders the streams for the HTML report, nil when none.
func streamsSection(st *StreamStats) *htmlStreams {
	if st == nil {
		return nil
	}
	h := &htmlStreams{Dialect: st.Dialect, Summary: describeStream(st) + "."}
	h.Table.Head = []string{"dir", "method", "tool", "answers", "parts", "bytes", "tokens", "first part p50", "first part p99", "end p50", "end p99"}
	n, more := limitRows(len(st.ByMethod))
	h.Table.More = more
	for _, m := range st.ByMethod[:n] {
		h.Table.Rows = append(h.Table.Rows, cells(m.Dir, m.Method, m.Tool, reportInt(m.Operations), reportInt(m.Chunks),
			reportInt(m.Bytes), reportInt(m.Usage.TotalTokens), fmtDur(m.FirstChunk.P50NS), fmtDur(m.FirstChunk.P99NS),
			fmtDur(m.Complete.P50NS), fmtDur(m.Complete.P99NS)))
	}
	return h
}

// describeStream is a one-line summary of the streams.
func describeStream(st *StreamStats) string {
	return fmt.Sprintf("%s, %s, first part %s (p50), end %s (p50), %s, %d unfinished",
		english.Count(st.Operations, "streamed answer"), english.Count(st.Chunks, "part"), fmtDur(st.FirstChunk.P50NS),
		fmtDur(st.Complete.P50NS), english.Count(st.Usage.TotalTokens, "token"), st.Unfinished)
}

// harParts counts the stream parts an HTTP exchange's response carried.
type harParts struct {
	n, bytes    int64
	first, last int64 // times of the first and last part
	usage       jsonrpc.Usage
}

// add notes rec when it is a stream part.
func (p *harParts) add(rec *tape.Record) {
	info := jsonrpc.Classify(rec.Frame)
	if info.Kind != jsonrpc.KindResponse || !streamDialect.MayStream(rec.Frame) {
		return
	}
	members := jsonrpc.ClassifyMembers(rec.Frame, &info, nil)
	part := streamDialect.Part(rec.Frame, members)
	if part == jsonrpc.PartSingle {
		return
	}
	if p.n == 0 {
		p.first = rec.Time
	}
	p.n++
	p.bytes += int64(len(rec.Frame))
	p.last = rec.Time
	if u, ok := streamDialect.Usage(rec.Frame, members); ok && part == jsonrpc.PartEnd {
		p.usage.PromptTokens += u.PromptTokens
		p.usage.CompletionTokens += u.CompletionTokens
		p.usage.TotalTokens += u.TotalTokens
	}
}

// harStream is the _streamed member of a HAR entry whose response
// carried stream parts: their number and bytes, the times (ms since the
// entry's start) of the first and the last, and the end parts' usage.
type harStream struct {
	Parts       int64         `json:"parts"`
	Bytes       int64         `json:"bytes"`
	FirstPartMS float64       `json:"firstPartMs"`
	LastPartMS  float64       `json:"lastPartMs"`
	Usage       jsonrpc.Usage `json:"usage"`
}

// har returns the _streamed member, nil when there were no parts.
func (p *harParts) har(start int64) *harStream {
	if p.n == 0 {
		return nil
	}
	return &harStream{Parts: p.n, Bytes: p.bytes, FirstPartMS: harMS(max(p.first-start, 0)),
		LastPartMS: harMS(max(p.last-start, 0)), Usage: p.usage}
}
