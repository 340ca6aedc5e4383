package jsonrpc

import (
	"bytes"
	"encoding/json"
)

// StreamPart is the place of one success response in an answer streamed as
// several results under one id.
//
// The general mechanism knows nothing of member names: a request may be
// answered by a start, any number of deltas and a terminal response under
// its id; an answer that is not a stream part is a single, terminal answer
// as JSON-RPC has it. Which results are parts is the business of a
// [StreamDialect], such as [LangGraphStream].
type StreamPart uint8

// Stream parts.
const (
	// PartSingle is an ordinary answer: not part of a stream, terminal.
	PartSingle StreamPart = iota
	// PartStart opens a streamed answer.
	PartStart
	// PartDelta is one chunk of a streamed answer.
	PartDelta
	// PartEnd closes a streamed answer: terminal.
	PartEnd
)

var partNames = [...]string{"single", "start", "delta", "end"}

func (p StreamPart) String() string {
	if int(p) < len(partNames) {
		return partNames[p]
	}
	return "part?"
}

// Terminal reports whether p ends the answer to its request: a single
// answer or the end of a stream. An error response is always terminal.
func (p StreamPart) Terminal() bool { return p == PartSingle || p == PartEnd }

// Streamed reports whether p belongs to a streamed answer.
func (p StreamPart) Streamed() bool { return p != PartSingle }

// StreamDialect names how a server marks the parts of a streamed answer:
// a string member of the result whose value says start, delta or end. A
// result without that member, or with another value, is [PartSingle].
type StreamDialect struct {
	// TypeKey is the result member holding the part's name.
	TypeKey string
	// Start, Delta and End are the names of the parts.
	Start, Delta, End string
	// DeltaKey is the member of a delta holding its text.
	DeltaKey string
	// UsageKey is the member of the end holding the token counts.
	UsageKey string
}

// LangGraphStream returns the dialect of the "Streaming Messages" section
// of the LangGraph MCP server's documentation: results
// {"type":"content_start"}, {"type":"content_delta","delta":"…"} and
// {"type":"content_end",…,"usage":{"prompt_tokens":…,"completion_tokens":…,
// "total_tokens":…}}.
func LangGraphStream() StreamDialect {
	return StreamDialect{TypeKey: "type", Start: "content_start", Delta: "content_delta",
		End: "content_end", DeltaKey: "delta", UsageKey: "usage"}
}

// member returns the value of the member named key among result, or false.
// The last occurrence wins, as elsewhere in this package.
func member(frame []byte, result []Member, key string) (Span, bool) {
	var buf [64]byte
	for i := len(result) - 1; i >= 0; i-- {
		m := result[i]
		k := m.Key.Of(frame)
		k = k[1 : len(k)-1]
		if m.KeyEscaped {
			k = appendUnquoted(buf[:0], k)
		}
		if string(k) == key {
			return m.Value, true
		}
	}
	return Span{}, false
}

// appendStringValue appends the unescaped string at p appended to dst, or false
// when the value is not a string.
func appendStringValue(dst, frame []byte, p Span) ([]byte, bool) {
	v := p.Of(frame)
	if len(v) < 2 || v[0] != '"' {
		return dst, false
	}
	return appendUnquoted(dst, v[1:len(v)-1]), true
}

// Part returns the stream part of a success response whose result members
// (from [ClassifyMembers]) are given. Other kinds have no members and are
// PartSingle.
func (d *StreamDialect) Part(frame []byte, result []Member) StreamPart {
	p, ok := member(frame, result, d.TypeKey)
	if !ok {
		return PartSingle
	}
	v := p.Of(frame)
	if len(v) < 2 || v[0] != '"' {
		return PartSingle
	}
	name := v[1 : len(v)-1]
	if bytes.IndexByte(name, '\\') >= 0 {
		var buf [64]byte
		name = appendUnquoted(buf[:0], name)
	}
	return d.PartNamed(name)
}

// PartNamed returns the part whose name (unescaped) is name: PartSingle
// for any other name.
func (d *StreamDialect) PartNamed(name []byte) StreamPart {
	switch string(name) {
	case d.Start:
		return PartStart
	case d.Delta:
		return PartDelta
	case d.End:
		return PartEnd
	}
	return PartSingle
}

// MayStream reports whether frame can hold a stream part: whether it
// contains one of the part names as a JSON string. It is a cheap filter for
// callers on a hot path that classify without members: true must be
// confirmed with [ClassifyMembers] and Part; false is certain except for a
// part name written with escapes ("content_\u0064elta"), which such
// callers then take for a single answer.
func (d *StreamDialect) MayStream(frame []byte) bool {
	names := [...]string{d.Delta, d.End, d.Start}
	// One scan for what the names have in common ("content_"), then a
	// look at each hit.
	common := names[0]
	for _, n := range names[1:] {
		i := 0
		for i < len(common) && i < len(n) && common[i] == n[i] {
			i++
		}
		common = common[:i]
	}
	for i := 0; ; {
		j := bytes.Index(frame[i:], []byte(common))
		if j < 0 {
			return false
		}
		j += i
		if j > 0 && frame[j-1] == '"' {
			rest := frame[j:]
			for _, n := range names {
				if n != "" && len(rest) > len(n) && string(rest[:len(n)]) == n && rest[len(n)] == '"' {
					return true
				}
			}
		}
		i = j + 1
	}
}

// DeltaText appends the text of a delta (the string member DeltaKey) to
// dst. A delta without it adds nothing.
func (d *StreamDialect) DeltaText(dst, frame []byte, result []Member) []byte {
	p, ok := member(frame, result, d.DeltaKey)
	if !ok {
		return dst
	}
	dst, _ = appendStringValue(dst, frame, p)
	return dst
}

// Usage is the token counts an end part reports.
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

// Usage returns the token counts of an end part (the object member
// UsageKey), and false when it has none or they are not integers. A
// missing total is the sum of the other two.
func (d *StreamDialect) Usage(frame []byte, result []Member) (Usage, bool) {
	p, ok := member(frame, result, d.UsageKey)
	if !ok {
		return Usage{}, false
	}
	var u Usage
	if json.Unmarshal(p.Of(frame), &u) != nil {
		return Usage{}, false
	}
	if u.TotalTokens == 0 {
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	return u, true
}

// FramePart returns the stream part of frame, a message that [Classify]
// described as info: the cheap [StreamDialect.MayStream] filter first,
// then the result's members. Anything but a success response is
// [PartSingle].
func (d *StreamDialect) FramePart(frame []byte, info *Info) StreamPart {
	if info.Kind != KindResponse || !d.MayStream(frame) {
		return PartSingle
	}
	var full Info
	var buf [16]Member
	return d.Part(frame, ClassifyMembers(frame, &full, buf[:0]))
}

// Ends reports whether frame, classified as info, is a terminal answer to
// its request: an error response, a single success response or the end
// part of a streamed answer (a start or a delta leaves the request in
// flight). Anything but a response is false.
func (d *StreamDialect) Ends(frame []byte, info *Info) bool {
	switch info.Kind {
	case KindError:
		return true
	case KindResponse:
		return d.FramePart(frame, info).Terminal()
	}
	return false
}
