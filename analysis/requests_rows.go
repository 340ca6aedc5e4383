package analysis

import (
	"bufio"
	"encoding/csv"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"

	"github.com/mcptape/mcptape/internal/jsonstr"
)

// requestColumns are the columns of the requests table, in order (see
// docs/requests-format.md).
var requestColumns = []string{
	"schema_version", "tape", "session", "transport", "protocol_version", "client_name", "client_version",
	"direction", "method", "tool", "target", "id", "seq", "start_ns", "latency_ns", "first_progress_ns", "first_chunk_ns",
	"outcome", "error_code", "cancelled", "request_bytes", "response_bytes", "mrtr_rounds", "task", "task_polls",
}

// tool is the row's tool column: the name of a tools/call operation.
func (r *requestRow) tool() string {
	if r.op.Method == mToolsCall {
		return r.op.Name
	}
	return ""
}

// target is the row's target column: the prompt name or resource URI.
func (r *requestRow) target() string {
	if r.op.Method == mToolsCall {
		return ""
	}
	return r.op.Name
}

func (r *requestRow) client() (name, version string) {
	if c := r.op.Client; c != nil {
		return c.Name, c.Version
	}
	return "", ""
}

// rowText holds the string columns of a row as the CSV and Parquet rows
// write them: valid UTF-8 (see validText).
type rowText struct {
	tape, session, transport, protocol, clientName, clientVersion, dir, method, tool, target, id string
}

// text returns the string columns of r, each byte of invalid UTF-8 (a
// name in a frame the tape keeps as base64, a file name) replaced with
// U+FFFD as the NDJSON rows write it: a Parquet reader refuses a whole
// file with one string that is not UTF-8 (DuckDB: "Invalid string
// encoding found in Parquet file"), and DuckDB's CSV reader refuses the
// file too.
func (r *requestRow) text() rowText {
	o := r.op
	cname, cver := r.client()
	return rowText{tape: validText(r.tape), session: validText(o.Session), transport: validText(r.transport),
		protocol: validText(o.ProtocolVersion), clientName: validText(cname), clientVersion: validText(cver),
		dir: string(o.Dir), method: validText(o.Method), tool: validText(r.tool()), target: validText(r.target()), id: validText(o.ID)}
}

// validText returns s with each byte of invalid UTF-8 replaced with
// U+FFFD, as jsonstr.AppendString writes it.
func validText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			b.WriteString("\uFFFD")
			i++
			continue
		}
		b.WriteString(s[i : i+size])
		i += size
	}
	return b.String()
}

// ndjsonRows writes one JSON object per row; absent values are null.
type ndjsonRows struct {
	w   *bufio.Writer
	buf []byte
}

func newNDJSONRows(w io.Writer) *ndjsonRows {
	return &ndjsonRows{w: bufio.NewWriterSize(w, 256<<10), buf: make([]byte, 0, 1024)}
}

func (n *ndjsonRows) write(r *requestRow) error {
	o := r.op
	b := append(n.buf[:0], `{"schema_version":`...)
	b = strconv.AppendInt(b, RequestsSchemaVersion, 10)
	cname, cver := r.client()
	for _, f := range [...]struct{ k, v string }{
		{`,"tape":`, r.tape}, {`,"session":`, o.Session}, {`,"transport":`, r.transport},
		{`,"protocol_version":`, o.ProtocolVersion}, {`,"client_name":`, cname}, {`,"client_version":`, cver},
		{`,"direction":`, string(o.Dir)}, {`,"method":`, o.Method}, {`,"tool":`, r.tool()},
		{`,"target":`, r.target()}, {`,"id":`, o.ID},
	} {
		b = append(b, f.k...)
		b = appendNullString(b, f.v)
	}
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, o.Seq, 10)
	b = append(b, `,"start_ns":`...)
	b = strconv.AppendInt(b, o.StartNS, 10)
	b = append(b, `,"latency_ns":`...)
	b = appendNullInt(b, o.LatencyNS, o.Answered && o.LatencyNS >= 0)
	b = append(b, `,"first_progress_ns":`...)
	b = appendNullInt(b, o.FirstProgressNS, o.FirstProgressNS >= 0)
	b = append(b, `,"first_chunk_ns":`...)
	b = appendNullInt(b, o.FirstChunkNS, o.FirstChunkNS >= 0)
	b = append(b, `,"outcome":"`...)
	b = append(b, o.Outcome...)
	b = append(b, `","error_code":`...)
	b = appendNullInt(b, o.ErrorCode, o.Outcome == OutcomeError)
	b = append(b, `,"cancelled":`...)
	b = strconv.AppendBool(b, o.Cancelled)
	b = append(b, `,"request_bytes":`...)
	b = strconv.AppendInt(b, o.RequestBytes, 10)
	b = append(b, `,"response_bytes":`...)
	b = strconv.AppendInt(b, o.ResponseBytes, 10)
	b = append(b, `,"mrtr_rounds":`...)
	b = strconv.AppendInt(b, o.Rounds, 10)
	b = append(b, `,"task":`...)
	b = strconv.AppendBool(b, o.Task)
	b = append(b, `,"task_polls":`...)
	b = strconv.AppendInt(b, o.Polls, 10)
	b = append(b, "}\n"...)
	n.buf = b
	_, err := n.w.Write(b)
	return err
}

func (n *ndjsonRows) close() error { return n.w.Flush() }

func appendNullString(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return jsonstr.AppendString(b, s)
}

func appendNullInt(b []byte, v int64, valid bool) []byte {
	if !valid {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, v, 10)
}

// csvRows writes RFC 4180 CSV with a header line; absent values are
// empty fields.
type csvRows struct {
	w      *csv.Writer
	rec    []string
	header bool
}

func newCSVRows(w io.Writer) *csvRows {
	return &csvRows{w: csv.NewWriter(w), rec: make([]string, len(requestColumns))}
}

func (c *csvRows) write(r *requestRow) error {
	if !c.header {
		c.header = true
		if err := c.w.Write(requestColumns); err != nil {
			return err
		}
	}
	o := r.op
	x := r.text()
	num := func(v int64, valid bool) string {
		if !valid {
			return ""
		}
		return strconv.FormatInt(v, 10)
	}
	rec := append(c.rec[:0], strconv.Itoa(RequestsSchemaVersion), x.tape, x.session, x.transport, x.protocol,
		x.clientName, x.clientVersion, x.dir, x.method, x.tool, x.target, x.id,
		num(o.Seq, true), num(o.StartNS, true), num(o.LatencyNS, o.Answered && o.LatencyNS >= 0), num(o.FirstProgressNS, o.FirstProgressNS >= 0),
		num(o.FirstChunkNS, o.FirstChunkNS >= 0), o.Outcome, num(o.ErrorCode, o.Outcome == OutcomeError), strconv.FormatBool(o.Cancelled),
		num(o.RequestBytes, true), num(o.ResponseBytes, true), num(o.Rounds, true), strconv.FormatBool(o.Task), num(o.Polls, true))
	return c.w.Write(rec)
}

func (c *csvRows) close() error {
	if !c.header { // an empty table still names its columns
		c.header = true
		if err := c.w.Write(requestColumns); err != nil {
			return err
		}
	}
	c.w.Flush()
	return c.w.Error()
}

// parquetRow is a row as parquet-go writes it (and as the NDJSON reads
// back with encoding/json); its tags name the columns of requestColumns.
// Optional values are pointers, nil for null: parquet-go writes an empty
// string of an optional string field as "" in some rows and as null in
// others, depending on its neighbours.
type parquetRow struct {
	SchemaVersion   int32   `parquet:"schema_version" json:"schema_version"`
	Tape            string  `parquet:"tape,dict" json:"tape"`
	Session         string  `parquet:"session,dict" json:"session"`
	Transport       string  `parquet:"transport,dict" json:"transport"`
	ProtocolVersion *string `parquet:"protocol_version,optional,dict" json:"protocol_version"`
	ClientName      *string `parquet:"client_name,optional,dict" json:"client_name"`
	ClientVersion   *string `parquet:"client_version,optional,dict" json:"client_version"`
	Direction       string  `parquet:"direction,dict" json:"direction"`
	Method          string  `parquet:"method,dict" json:"method"`
	Tool            *string `parquet:"tool,optional,dict" json:"tool"`
	Target          *string `parquet:"target,optional" json:"target"`
	ID              *string `parquet:"id,optional" json:"id"`
	Seq             int64   `parquet:"seq" json:"seq"`
	StartNS         int64   `parquet:"start_ns" json:"start_ns"`
	LatencyNS       *int64  `parquet:"latency_ns,optional" json:"latency_ns"`
	FirstProgressNS *int64  `parquet:"first_progress_ns,optional" json:"first_progress_ns"`
	FirstChunkNS    *int64  `parquet:"first_chunk_ns,optional" json:"first_chunk_ns"`
	Outcome         string  `parquet:"outcome,dict" json:"outcome"`
	ErrorCode       *int64  `parquet:"error_code,optional" json:"error_code"`
	Cancelled       bool    `parquet:"cancelled" json:"cancelled"`
	RequestBytes    int64   `parquet:"request_bytes" json:"request_bytes"`
	ResponseBytes   int64   `parquet:"response_bytes" json:"response_bytes"`
	MRTRRounds      int64   `parquet:"mrtr_rounds" json:"mrtr_rounds"`
	Task            bool    `parquet:"task" json:"task"`
	TaskPolls       int64   `parquet:"task_polls" json:"task_polls"`
}

// parquetBatch is how many rows are handed to the Parquet writer at once.
const parquetBatch = 1024

// parquetRows writes a zstd-compressed Parquet file, in batches.
type parquetRows struct {
	w    *parquet.GenericWriter[parquetRow]
	rows []parquetRow
	nums [][4]int64  // what the optional numbers of rows point at
	strs [][6]string // what the optional strings of rows point at
}

func newParquetRows(w io.Writer) *parquetRows {
	return &parquetRows{
		w:    parquet.NewGenericWriter[parquetRow](w, parquet.Compression(&parquet.Zstd)),
		rows: make([]parquetRow, 0, parquetBatch),
		nums: make([][4]int64, parquetBatch),
		strs: make([][6]string, parquetBatch),
	}
}

func (p *parquetRows) write(r *requestRow) error {
	o := r.op
	i := len(p.rows)
	n := &p.nums[i]
	opt := func(k int, v int64, valid bool) *int64 {
		if !valid {
			return nil
		}
		n[k] = v
		return &n[k]
	}
	ss := &p.strs[i]
	str := func(k int, v string) *string {
		if v == "" {
			return nil
		}
		ss[k] = v
		return &ss[k]
	}
	x := r.text()
	p.rows = append(p.rows, parquetRow{SchemaVersion: RequestsSchemaVersion, Tape: x.tape, Session: x.session,
		Transport: x.transport, ProtocolVersion: str(0, x.protocol), ClientName: str(1, x.clientName), ClientVersion: str(2, x.clientVersion),
		Direction: x.dir, Method: x.method, Tool: str(3, x.tool), Target: str(4, x.target), ID: str(5, x.id), Seq: o.Seq,
		StartNS: o.StartNS, LatencyNS: opt(0, o.LatencyNS, o.Answered && o.LatencyNS >= 0), FirstProgressNS: opt(1, o.FirstProgressNS, o.FirstProgressNS >= 0),
		FirstChunkNS: opt(3, o.FirstChunkNS, o.FirstChunkNS >= 0), Outcome: o.Outcome, ErrorCode: opt(2, o.ErrorCode, o.Outcome == OutcomeError), Cancelled: o.Cancelled,
		RequestBytes: o.RequestBytes, ResponseBytes: o.ResponseBytes, MRTRRounds: o.Rounds, Task: o.Task, TaskPolls: o.Polls})
	if len(p.rows) == parquetBatch {
		return p.flush()
	}
	return nil
}

func (p *parquetRows) flush() error {
	if len(p.rows) == 0 {
		return nil
	}
	_, err := p.w.Write(p.rows)
	clear(p.rows)
	clear(p.strs)
	p.rows = p.rows[:0]
	return err
}

func (p *parquetRows) close() error {
	if err := p.flush(); err != nil {
		return err
	}
	return p.w.Close()
}
