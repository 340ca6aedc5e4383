package analysis

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/mcptape/mcptape/internal/english"
	"github.com/mcptape/mcptape/internal/termsafe"
	"github.com/mcptape/mcptape/jsonrpc"
	"github.com/mcptape/mcptape/tape"
)

// showWriter writes timeline lines in one format.
type showWriter struct {
	w         *bufio.Writer
	safe      *termsafe.Writer // under w in the text format, else nil
	format    Format
	shown     int64
	compacted int64
	buf       bytes.Buffer
}

func newShowWriter(w io.Writer, f Format) *showWriter {
	var safe *termsafe.Writer
	if f == FormatText {
		safe = termsafe.NewWriter(w) // values from the tape stay text
		w = safe
	}
	return &showWriter{w: bufio.NewWriterSize(w, 64<<10), safe: safe, format: f}
}

func (s *showWriter) flush() error {
	err := s.w.Flush()
	if err == nil && s.safe != nil {
		err = s.safe.Flush()
	}
	if err != nil {
		return fmt.Errorf("analysis: show: %w", err)
	}
	return nil
}

func (s *showWriter) write(m *line) error {
	var err error
	switch s.format {
	case FormatRaw:
		err = s.raw(m)
	case FormatNDJSON:
		err = s.ndjson(m)
	default:
		_, err = s.w.WriteString(textLine(m))
	}
	if err != nil {
		return fmt.Errorf("analysis: show: %w", err)
	}
	s.shown++
	return nil
}

// raw writes the frame exactly, then a newline. A valid JSON frame that
// holds line breaks is compacted so that it stays on one line.
func (s *showWriter) raw(m *line) error {
	frame := m.item.Frame
	// Only a newline breaks the one-frame-per-line output: a carriage
	// return (a CRLF client's line) is written as recorded.
	if bytes.IndexByte(frame, '\n') >= 0 && m.item.Info.Kind != jsonrpc.KindInvalid {
		s.buf.Reset()
		if json.Compact(&s.buf, frame) == nil {
			frame = s.buf.Bytes()
			s.compacted++
		}
	}
	if _, err := s.w.Write(frame); err != nil {
		return err
	}
	return s.w.WriteByte('\n')
}

// kindShort abbreviates a kind for the text timeline.
var kindShort = map[jsonrpc.Kind]string{
	jsonrpc.KindRequest:      "req",
	jsonrpc.KindNotification: "notif",
	jsonrpc.KindResponse:     "resp",
	jsonrpc.KindError:        "error",
	jsonrpc.KindBatch:        "batch",
	jsonrpc.KindInvalid:      "INVALID",
}

// textLine renders one line of the text timeline:
//
//	+0.012s  1  ←  resp   initialize       0    520 B   12.1ms  everything 2.0 · protocol 2025-06-18
func textLine(m *line) string {
	it := m.item
	rec := it.Rec
	at := offset(rec.Time - m.origin)
	sess := clip(or(rec.Session, "-"), 8)
	if it.IsEvent() {
		return fmt.Sprintf("%10s  %-8s %s  %-7s %s\n", at, sess, arrow(string(rec.Dir)), clip(rec.Event, 7), eventSummary(rec))
	}
	method := m.method
	if it.Info.Kind == jsonrpc.KindBatch {
		method = "[" + english.Count(int64(it.Batch), "member") + "]"
	} else if it.Member >= 0 {
		method = "↳ " + method
	}
	if method == "" && (it.Info.Kind == jsonrpc.KindResponse || it.Info.Kind == jsonrpc.KindError) {
		method = "?"
	}
	if m.partN > 0 { // a part of a streamed answer, under its request
		method = fmt.Sprintf("↳ %s %s #%d", method, m.part, m.partN)
	}
	lat := ""
	if m.latency >= 0 {
		lat = fmtDur(m.latency)
	}
	id := ""
	if it.Info.ID.Type != jsonrpc.IDAbsent {
		id = clip(string(it.Info.ID.Raw), 12)
	}
	return fmt.Sprintf("%10s  %-8s %s  %-7s %-32s %-12s %8s %8s  %s\n", at, sess, arrow(string(rec.Dir)), kindShort[it.Info.Kind],
		clip(method, 32), id, size(len(it.Frame)), lat, Summary(it.Frame, it.Info, m.method))
}

// size writes a byte count: 312 B, 4.5 KB, 12 MB.
func size(n int) string {
	switch {
	case n < 1000:
		return strconv.Itoa(n) + " B"
	case n < 1000_000:
		return sig3(float64(n)/1e3) + " KB"
	}
	return sig3(float64(n)/1e6) + " MB"
}

// eventSummary summarises an event's payload on one line.
func eventSummary(rec *tape.Record) string {
	switch rec.Event {
	case tape.EventStderr:
		var d stderrEvent
		if json.Unmarshal(rec.Data, &d) == nil && d.Line != nil {
			return clip(*d.Line, summaryWidth)
		}
	case tape.EventExit:
		var d exitEvent
		if json.Unmarshal(rec.Data, &d) == nil {
			return describeExit(&ExitInfo{Code: d.Code, Signal: d.Signal})
		}
	case tape.EventClose:
		var d closeEvent
		if json.Unmarshal(rec.Data, &d) == nil && d.By != "" {
			return "by " + d.By
		}
	case tape.EventError:
		var d errorEvent
		if json.Unmarshal(rec.Data, &d) == nil && d.Error != "" {
			return clip(d.Error, summaryWidth)
		}
	case tape.EventHTTP:
		var d httpEvent
		if json.Unmarshal(rec.Data, &d) == nil && d.Method != "" {
			s := fmt.Sprintf("%s %s %s", d.Phase, d.Method, clip(d.Path, 50))
			if d.Status != 0 {
				s += " " + strconv.Itoa(d.Status)
			}
			if d.ContentType != "" {
				s += " " + clip(d.ContentType, 30)
			}
			if d.DurationNS > 0 {
				s += " after " + fmtDur(d.DurationNS)
			}
			if d.ClosedBy != "" {
				s += ", closed by " + d.ClosedBy
			}
			if d.Error != "" {
				s += ": " + d.Error
			}
			return clip(s, summaryWidth)
		}
	case tape.EventStats:
		// A joined read (several tapes) ends with the sum of their stats
		// events: say so, it was not recorded as such.
		var d tape.StatsData
		if json.Unmarshal(rec.Data, &d) == nil && d.Tapes > 0 {
			return clip(fmt.Sprintf("sum of the stats of %s (joined read, not recorded): %s", english.Count(d.Tapes, "tape"), compact(rec.Data)), summaryWidth)
		}
	}
	return compact(rec.Data)
}

// ndjsonLine is one line of FormatNDJSON.
type ndjsonLine struct {
	Type      string          `json:"type"`
	Record    int64           `json:"record"`
	TimeNS    int64           `json:"time_ns"`
	OffsetNS  int64           `json:"offset_ns"`
	Session   string          `json:"session"`
	Dir       string          `json:"dir,omitempty"`
	Kind      string          `json:"kind,omitempty"`
	Method    string          `json:"method,omitempty"`
	ID        json.RawMessage `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Size      int             `json:"size"`
	Batch     *batchPos       `json:"batch,omitempty"`
	Stream    *streamPos      `json:"stream,omitempty"`
	LatencyNS *int64          `json:"latency_ns,omitempty"`
	ErrorCode *int64          `json:"error_code,omitempty"`
	Summary   string          `json:"summary,omitempty"`
	Violation []string        `json:"violations,omitempty"`
	Event     string          `json:"event,omitempty"`
	Data      json.RawMessage `json:"data,omitempty"`
	// Exactly one of Message (valid JSON), Text (valid UTF-8) and B64.
	Message json.RawMessage `json:"message,omitempty"`
	Text    *string         `json:"text,omitempty"`
	B64     string          `json:"b64,omitempty"`
}

// streamPos places a part of a streamed answer: its kind (start, delta,
// end, or single for a plain answer closing a stream) and number from 1.
type streamPos struct {
	Part  string `json:"part"`
	Index int    `json:"index"`
}

type batchPos struct {
	Len    int `json:"len"`
	Member int `json:"member"` // -1 for the batch itself
}

func (s *showWriter) ndjson(m *line) error {
	it := m.item
	rec := it.Rec
	l := ndjsonLine{Type: string(rec.Type), Record: it.Seq, TimeNS: rec.Time, OffsetNS: rec.Time - m.origin,
		Session: rec.Session, Dir: string(rec.Dir)}
	if it.IsEvent() {
		l.Event, l.Data = rec.Event, rec.Data
		if len(l.Data) > 0 && !json.Valid(l.Data) {
			l.Data = nil
		}
	} else {
		info := &it.Info
		l.Kind, l.Method, l.Name, l.Size = info.Kind.String(), m.method, m.name, len(it.Frame)
		if info.ID.Type != jsonrpc.IDAbsent {
			l.ID = info.ID.Raw
		}
		if it.Batch > 0 {
			l.Batch = &batchPos{Len: it.Batch, Member: it.Member}
		}
		if m.latency >= 0 {
			l.LatencyNS = &m.latency
		}
		if m.partN > 0 {
			l.Stream = &streamPos{Part: m.part.String(), Index: m.partN}
		}
		if info.HasErrorCode {
			l.ErrorCode = &info.ErrorCode
		}
		l.Summary = Summary(it.Frame, it.Info, m.method)
		l.Violation = info.Violations.Names()
		switch {
		case !info.Violations.Has(jsonrpc.ViolationInvalidJSON) && !info.Violations.Has(jsonrpc.ViolationInvalidUTF8):
			l.Message = it.Frame
		case utf8.Valid(it.Frame):
			t := string(it.Frame)
			l.Text = &t
		default:
			l.B64 = base64.StdEncoding.EncodeToString(it.Frame)
		}
	}
	b, err := json.Marshal(&l)
	if err != nil {
		return err
	}
	if _, err := s.w.Write(b); err != nil {
		return err
	}
	return s.w.WriteByte('\n')
}
