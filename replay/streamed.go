package replay

// Answers streamed as several results under one id (jsonrpc.StreamPart:
// start, deltas, a terminal end; the LangGraph MCP server's dialect). On
// both sides, the recording's and the live server's, the parts of one
// answer are joined into one message before it is paired and compared:
//
//	{"jsonrpc":"2.0","id":ID,"result":{"stream":{"text":JOINED,"parts":N,"deltas":[...]},"end":END}}
//
// where END is the end part's result. The request stays in flight until
// the end part. Unless WithExactChunks, result.stream.parts and
// result.stream.deltas are ignored: chunk boundaries and counts may
// differ. A terminal error keeps its frame (the parts before it are not
// compared). A live stream without its end when the answer's time is up
// is reported "unfinished" (missing: exit 1) instead of failing the
// session, and so is a recorded one, unless the recording cancels its
// request (notifications/cancelled): such a stream is not compared.

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// streamDialect is the dialect of streamed answers replay joins.
var streamDialect = jsonrpc.LangGraphStream()

// chunkPaths are the paths of a joined answer that only WithExactChunks
// compares.
var chunkPaths = []string{"result.stream.parts", "result.stream.deltas"}

// streamParts gathers the parts of one streamed answer.
type streamParts struct {
	text        []byte
	deltas      []string
	n           int          // parts (start and deltas)
	first, last int64        // times of the first and last part (Unix ns)
	kept        *StreamParts // the recorded parts themselves (loading only)
}

// partOf returns the stream part of a server message: PartSingle unless
// it is a response whose result marks one.
func partOf(frame []byte, info *jsonrpc.Info, members []jsonrpc.Member) (jsonrpc.StreamPart, []jsonrpc.Member) {
	if info.Kind != jsonrpc.KindResponse || !streamDialect.MayStream(frame) {
		return jsonrpc.PartSingle, members
	}
	var full jsonrpc.Info
	members = jsonrpc.ClassifyMembers(frame, &full, members)
	return streamDialect.Part(frame, members), members
}

// add takes a start or delta part received at t.
func (p *streamParts) add(part jsonrpc.StreamPart, frame []byte, members []jsonrpc.Member, t int64) {
	if p.n == 0 {
		p.first = t
	}
	p.n++
	p.last = t
	if part == jsonrpc.PartDelta {
		start := len(p.text)
		p.text = streamDialect.DeltaText(p.text, frame, members)
		p.deltas = append(p.deltas, string(p.text[start:]))
	}
}

// join returns the message standing for the whole answer, ended by the
// terminal frame end: see the file's doc.
func (p *streamParts) join(end []byte) []byte {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
	}
	if json.Unmarshal(end, &m) != nil || len(m.Result) == 0 {
		return end // an error, or not decodable: compared as it is
	}
	deltas := p.deltas
	if deltas == nil {
		deltas = []string{}
	}
	b, err := json.Marshal(joinedMsg{JSONRPC: "2.0", ID: m.ID,
		Result: joinedResult{Stream: joinedStream{Text: string(p.text), Parts: p.n + 1, Deltas: deltas}, End: m.Result}})
	if err != nil { // not reached: the parts are strings, the rest valid JSON
		return end
	}
	return b
}

// The joined message of a streamed answer.
type (
	joinedMsg struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  joinedResult    `json:"result"`
	}
	joinedResult struct {
		Stream joinedStream    `json:"stream"`
		End    json.RawMessage `json:"end"`
	}
	joinedStream struct {
		Text   string   `json:"text"`
		Parts  int      `json:"parts"`
		Deltas []string `json:"deltas"`
	}
)

// joinRecorded gathers the recorded parts of the answer e to the request
// k (a dirKey): a start or delta is kept back (false: not built); the
// terminal answer after parts becomes the joined message.
func (l *loading) joinRecorded(e *entry, k string) bool {
	if e.dir != tape.ServerToClient {
		return true
	}
	part, members := partOf(e.frame, &e.info, nil)
	p := l.parts[k]
	if part == jsonrpc.PartStart || part == jsonrpc.PartDelta {
		if p == nil && l.open[k] == 0 {
			return false // a part after the end of its answer: not compared
		}
		if p == nil {
			p = &streamParts{kept: &StreamParts{}}
			l.parts[k] = p
		}
		p.add(part, e.frame, members, e.time)
		p.kept.Frames, p.kept.Times = append(p.kept.Frames, e.frame), append(p.kept.Times, e.time)
		return false
	}
	if p == nil {
		return true
	}
	delete(l.parts, k)
	p.kept.End = e.frame
	e.frame = p.join(e.frame)
	e.info = jsonrpc.Classify(e.frame)
	e.parts = p.kept
	return true
}

// unfinishedRecorded notes the recorded streams the tape ends in, but
// those whose request the client cancelled: a cancelled request gets no
// answer, its stream may stop anywhere.
func (l *loading) unfinishedRecorded() {
	if _, index := l.out.(discard); index {
		return // the replay's own loading notes them
	}
	for k, p := range l.parts {
		if l.cancelledOpen[k] {
			continue
		}
		l.s.unfinished = append(l.s.unfinished, fmt.Sprintf("the recorded answer to %s stops after %d parts, without its end part", k, p.n))
	}
	clear(l.parts)
}

// takeLivePart gathers a live start or delta part (true: nothing more to
// do with it now); for the terminal answer after parts it returns the
// joined message to pair instead. mu is held.
func (r *runner) takeLivePart(frame []byte, info *jsonrpc.Info) (bool, []byte) {
	if info.Kind != jsonrpc.KindResponse && info.Kind != jsonrpc.KindError {
		return false, frame
	}
	var part jsonrpc.StreamPart
	part, r.members = partOf(frame, info, r.members)
	key := info.ID.Key() // one id by value, as everywhere (1 and 1.0)
	p := r.liveParts[key]
	now := time.Now().UnixNano()
	if part == jsonrpc.PartStart || part == jsonrpc.PartDelta {
		if p == nil {
			p = &streamParts{}
			r.liveParts[key] = p
		}
		p.add(part, frame, r.members, now)
		r.notify()
		return true, nil
	}
	if p == nil {
		return false, frame
	}
	delete(r.liveParts, key)
	st := r.streamStats()
	st.Answers++
	st.LiveParts += p.n + 1
	st.liveSpan += now - p.first
	return false, p.join(frame)
}

// StreamTiming describes the streamed answers of a replayed session.
type StreamTiming struct {
	// Answers counts the live streamed answers that ended; LiveParts and
	// RecordedParts their parts on each side (the end included).
	Answers       int `json:"answers"`
	LiveParts     int `json:"live_parts"`
	RecordedParts int `json:"recorded_parts"`
	// LiveGapNS and RecordedGapNS are the mean times between two parts.
	LiveGapNS     int64 `json:"live_gap_ns"`
	RecordedGapNS int64 `json:"recorded_gap_ns"`

	liveSpan, recSpan int64
	recAnswers        int
}

func (r *runner) streamStats() *StreamTiming {
	if r.rep.Streams == nil {
		r.rep.Streams = &StreamTiming{}
	}
	return r.rep.Streams
}

// recordedStream counts the recorded parts of the answer m when it was
// streamed. mu is held.
func (r *runner) recordedStream(m *srvState) {
	if m.Stream == nil || len(m.Stream.Times) == 0 {
		return
	}
	st := r.streamStats()
	st.RecordedParts += len(m.Stream.Frames) + 1
	st.recAnswers++
	st.recSpan += m.Time - m.Stream.Times[0]
}

// liveStreamStarted reports whether the live answer to the recorded
// request recKey has started streaming. mu is held.
func (r *runner) liveStreamStarted(recKey string) (int, bool) {
	live, ok := r.ids.live[baseKey(recKey)]
	if !ok {
		return 0, false
	}
	p := r.liveParts[string(live)]
	if p == nil {
		return 0, false
	}
	return p.n, true
}

// finishStreams turns the timings into means and reports the unfinished
// streams. mu is held, or the receiver stopped.
func (r *runner) finishStreams() {
	for _, u := range r.recUnfinished {
		r.rep.Missing++
		r.rep.Problems = append(r.rep.Problems, Problem{Kind: "unfinished", What: u})
	}
	st := r.rep.Streams
	if st == nil {
		return
	}
	if n := st.LiveParts - st.Answers; n > 0 {
		st.LiveGapNS = st.liveSpan / int64(n)
	}
	if n := st.RecordedParts - st.recAnswers; n > 0 {
		st.RecordedGapNS = st.recSpan / int64(n)
	}
	r.addNote(fmt.Sprintf("%d streamed answers: a part every %v live, every %v in the recording (%d and %d parts)",
		st.Answers, time.Duration(st.LiveGapNS).Round(time.Microsecond), time.Duration(st.RecordedGapNS).Round(time.Microsecond),
		st.LiveParts, st.RecordedParts))
}
